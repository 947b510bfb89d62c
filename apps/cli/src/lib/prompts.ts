import { CliError, UsageError } from './errors';
import { ExitCode } from './exit-codes';
import { readStdin } from './input';
import { inline, neutralise, type Output, terminalColumns } from './output';

/**
 * The prompt library, loaded when a prompt is shown: at its loading it asks Node for the
 * terminal's colours (util.styleText), and Node then warns on stderr when NO_COLOR and
 * FORCE_COLOR are both set, before `--json`'s error, which is to be the only thing there.
 */
const prompts = () => import('@clack/prompts');

/**
 * A prompt left with Ctrl-C (or Esc, which the prompt library does not tell apart, or Ctrl-D) is interrupted,
 * exit 130 as a Ctrl-C anywhere else; answering No to a confirmation is exit 1.
 */
const cancelled = ({ declined = false } = {}) =>
  new CliError('cancelled', {
    exitCode: declined ? ExitCode.error : ExitCode.interrupted,
    hint: 'Nothing was changed.',
  });

/**
 * A prompt that also ends when its input does: stdin closed, or Ctrl-D before anything is typed,
 * which a shell reads as the end of input and the prompt library ignores. It would otherwise wait for ever, or Node end the
 * run with exit 13 and the terminal's cursor left hidden; ended so, it is cancelled as by Ctrl-C.
 */
async function untilInputEnds<T>(prompt: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ended = new AbortController();
  const end = () => ended.abort();
  // As a shell reads it: Ctrl-D ends input on an empty line only (a half-typed answer stays).
  let typed = false;
  const key = (text: unknown, pressed?: { ctrl?: boolean; meta?: boolean; name?: string }) => {
    if (pressed?.ctrl && pressed.name === 'd') {
      if (!typed) end();
    } else if (typeof text === 'string' && text !== '' && !pressed?.ctrl && !pressed?.meta) typed = true;
  };
  process.stdin.once('end', end).once('close', end).on('keypress', key);
  try {
    return await prompt(ended.signal);
  } finally {
    process.stdin.off('end', end).off('close', end).off('keypress', key);
  }
}

/**
 * A required value: the one given, else asked for on a terminal, else a usage error (exit 2)
 * naming the command's usage, so scripts fail fast instead of hanging on a prompt.
 */
export async function required(
  out: Output,
  value: string | undefined,
  ask: {
    message: string;
    placeholder?: string;
    /** What Enter on an empty answer gives, shown as the placeholder: typing replaces it. */
    default?: string;
    usage: string;
    secret?: boolean;
    /** Asks again while it returns what is wrong with the answer (a password too short). */
    check?: (answer: string) => string | undefined;
  },
): Promise<string> {
  if (value !== undefined && value !== '') return value;
  if (!out.mode.interactive) {
    throw new UsageError(missing(ask.message), `Usage: ${ask.usage}`);
  }
  const common = {
    message: neutralise(ask.message),
    output: promptOutput(out),
    // Nothing typed takes the default (the prompt puts it in after validating); blanks never.
    validate: (input: string | undefined) =>
      input?.trim() ? ask.check?.(input) : ask.default && !input ? undefined : 'required',
  };
  const placeholder = ask.default ?? ask.placeholder;
  const clack = await prompts();
  const answer = await untilInputEnds((signal) =>
    ask.secret
      ? clack.password({ ...common, signal })
      : clack.text({
          ...common,
          signal,
          ...(placeholder ? { placeholder } : {}),
          ...(ask.default ? { defaultValue: ask.default } : {}),
        }),
  );
  if (clack.isCancel(answer)) throw cancelled();
  return answer.trim();
}

/**
 * A secret given on stdin: all that is piped in, blanks around it dropped, or, on a terminal, asked
 * for without showing it (off a terminal and with nothing piped: the usage error of `required`).
 */
export async function secretFromStdin(
  out: Output,
  ask: { message: string; usage: string },
  maxBytes?: number,
): Promise<string> {
  return process.stdin.isTTY
    ? required(out, undefined, { ...ask, secret: true })
    : (await readStdin(maxBytes)).trim();
}

/**
 * Asks before something that cannot be undone. Without a terminal there is nobody to ask: the
 * command line itself is the decision, as with `--yes`.
 */
export async function confirm(out: Output, message: string, yes: boolean | undefined): Promise<void> {
  if (yes || !out.mode.interactive) return;
  const clack = await prompts();
  const answer = await untilInputEnds((signal) =>
    clack.confirm({ message: neutralise(message), output: promptOutput(out), initialValue: false, signal }),
  );
  if (clack.isCancel(answer)) throw cancelled();
  if (!answer) throw cancelled({ declined: true });
}

/**
 * Before something that cannot be undone to a space (closing it, leaving it) when none is named:
 * on a terminal it is the default space, once confirmed; elsewhere nobody is asked, so the
 * default space takes --yes, and without it the command line is a usage error: a script (or a
 * hint copied without its space) must not act on whichever space happens to be the default.
 */
export function requireSpaceOrYes(
  out: Output,
  reference: string | undefined,
  yes: boolean | undefined,
  { verb, command }: { verb: string; command: string },
): void {
  if (reference !== undefined || yes || out.mode.interactive) return;
  throw new UsageError(
    `name the space to ${verb}`,
    `Usage: ${command} SPACE (or --yes alone to ${verb} the default space)`,
  );
}

/**
 * A required choice among things the server knows (a document, a participant), or among a few
 * fixed values (a shell): the one named, else a list to pick from on a terminal, else a usage
 * error. On a terminal with nothing to pick from, `none` says so (nobody to kick), rather than a
 * usage error for an argument that could not have been given.
 */
export async function choose<T>(
  out: Output,
  reference: string | undefined,
  ask: {
    message: string;
    usage: string;
    items: readonly T[];
    label: (item: T) => string;
    id: (item: T) => string;
    /** The error when a terminal has nothing to offer (default: the usage error). */
    none?: () => CliError;
    /** The id of the item selected at first (default: the first). */
    initial?: string | undefined;
    /** The usage error off a terminal (default: "missing …" and the usage). */
    missing?: () => UsageError;
  },
): Promise<string> {
  if (reference !== undefined && reference !== '') return reference;
  const usage = () => ask.missing?.() ?? new UsageError(missing(ask.message), `Usage: ${ask.usage}`);
  if (!out.mode.interactive) throw usage();
  if (ask.items.length === 0) throw ask.none?.() ?? usage();
  const clack = await prompts();
  const answer = await untilInputEnds((signal) =>
    clack.select({
      // Prompts write to the terminal themselves: the names in them are neutralised here.
      message: neutralise(ask.message),
      output: promptOutput(out),
      options: ask.items.map((item) => ({ value: ask.id(item), label: inline(ask.label(item)) })),
      signal,
      ...(ask.initial !== undefined ? { initialValue: ask.initial } : {}),
    }),
  );
  if (clack.isCancel(answer)) throw cancelled();
  return answer;
}

/**
 * Where prompts draw: stderr, without the styles the prompt library adds when colours are off
 * (NO_COLOR, --no-color). The library styles with `util.styleText`, which knows neither
 * --no-color nor, in Node 20, that NO_COLOR covers dim, strikethrough and the like; so its
 * styles are taken out of what it writes, all but inverse and hidden: with the terminal's own
 * cursor hidden while it asks, they are how a text prompt shows where the cursor is. Its width is
 * `terminalColumns`.
 */
export function promptOutput(out: Output): NodeJS.WriteStream {
  const stderr = process.stderr;
  return new Proxy(stderr, {
    get(target, property) {
      // A terminal that reports no size (0 columns: no controlling terminal, `docker exec -t`)
      // is of unknown width, taken as 80 as most CLIs do; clack took 0 as it is and drew the
      // prompt a character a line, its escape sequences split across lines.
      if (property === 'columns') return terminalColumns(target);
      if (property === 'write' && !out.mode.color) {
        return (chunk: unknown, ...rest: never[]) =>
          target.write(typeof chunk === 'string' ? withoutStyles(chunk) : (chunk as Uint8Array), ...rest);
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Text without its SGR sequences (colours, dim, bold, strikethrough…), but for inverse and hidden. */
export function withoutStyles(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the sequences taken out.
  return text.replace(/\x1b\[([0-9;]*)m/g, (_sequence, codes: string) => {
    const kept = codes.split(';').filter((code) => KEPT_STYLES.has(code));
    return kept.length > 0 ? `\x1b[${kept.join(';')}m` : '';
  });
}

/** Inverse and hidden, on and off: the text prompts' cursor. */
const KEPT_STYLES = new Set(['7', '27', '8', '28']);

/**
 * What a prompt asks for, as the error when nobody can be asked: "missing token" for "Which
 * token?", "missing version of plan.md" for "Which version of plan.md?" (names keep their case).
 */
function missing(message: string): string {
  const what = message.replace(/[?:]\s*$/, '').replace(/^(Which|Paste) /, '');
  return `missing ${what[0]!.toLowerCase()}${what.slice(1)}`;
}
