import { randomBytes } from 'node:crypto';
import stringWidth from 'fast-string-width';
import pc from 'picocolors';

type Colors = ReturnType<typeof pc.createColors>;

/**
 * What a terminal acts on instead of showing, in text that came from elsewhere (a name, a
 * message, a document, a server's error): the C0 controls (ESC starts the sequences that clear
 * the screen, retitle the window, write the clipboard or hide text), DEL, the C1 controls (some
 * terminals take U+009B for ESC [), and the bidirectional embeddings, overrides and isolates,
 * which reorder what follows them. Newline and tab are kept, for text of several lines; `inline`
 * takes them too.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point.
const UNSAFE_INLINE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
/** What JSON leaves as it is of those: every C0 control is escaped by JSON.stringify already. */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const hex = (char: string, digits: number) => char.charCodeAt(0).toString(16).padStart(digits, '0');
/** `\x1b` for ESC, `\u202e` for RIGHT-TO-LEFT OVERRIDE: visible, and plainly not the text's own. */
const shown = (char: string) => (char.charCodeAt(0) <= 0xff ? `\\x${hex(char, 2)}` : `\\u${hex(char, 4)}`);

/**
 * A carriage return that ends a line (a Windows document's CRLF, a line cut from one) moves the
 * cursor to where the next line starts anyway: it hides nothing, and is left out rather than
 * shown as `\x0d` on every line. Anywhere else it could write over what came before it, and is
 * shown. `--json` and `artifact download` keep it.
 */
const CR_ENDING_A_LINE = /\r(?=\n|$)/g;

/** Text made safe to print: control characters (not newline and tab) shown as `\x1b`, `\u202e`. */
export const neutralise = (text: string): string => text.replace(CR_ENDING_A_LINE, '').replace(UNSAFE, shown);

/**
 * The same for a slot of one line (a name in a table, a message's sender, the first line of a
 * message): newline and tab too; a carriage return ending it is left out, as neutralise does.
 */
export const inline = (text: string): string => text.replace(/\r$/, '').replace(UNSAFE_INLINE, shown);

/** `n` and what it counts, singular for one: `1 space`, `2 spaces`, `2 replies` (given). */
export const count = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/**
 * JSON as JSON.stringify writes it, with the C1 controls and bidirectional marks it leaves raw
 * written as `\u` escapes too: the same JSON value, and nothing a terminal would act on.
 */
export const toJson = (value: unknown, indent?: number): string =>
  String(JSON.stringify(value, null, indent)).replace(UNSAFE_IN_JSON, (char) => `\\u${hex(char, 4)}`);

const ESC = '\u001b';
/**
 * Stands for ESC in the colours the CLI applies itself, until a line is printed: every other
 * control character in it is then shown escaped, and the marks become ESC again. Random to each
 * run and never printed, so text from a server cannot pass its escape sequences off as colours.
 */
const MARK = `\ue000${randomBytes(8).toString('hex')}`;
const MARKED_SGR = new RegExp(`${MARK}\\[[0-9;]*m`, 'g');
/** The CLI's own colours once printable: every ESC left in a printable line is one of them. */
const SGR = new RegExp(`${ESC}\\[[0-9;]*m`, 'g');

/** picocolors' colours, each neutralising what it wraps and writing its own ESC as the mark. */
function markedColors(enabled: boolean): Colors {
  const colors = pc.createColors(enabled);
  const marked: Record<string, unknown> = { ...colors };
  for (const [name, format] of Object.entries(colors)) {
    if (typeof format !== 'function') continue;
    // The marks of nested colours go in as ESC, so picocolors can reopen an outer colour.
    marked[name] = (text: unknown) =>
      format(neutralise(String(text)).replaceAll(MARK, ESC)).replaceAll(ESC, MARK);
  }
  return marked as unknown as Colors;
}

/** A line as the terminal gets it: what it quotes neutralised, the CLI's own colours real. */
const printable = (text: string): string => neutralise(text).replaceAll(MARK, ESC);

/** The same for a status line, kept to one line whatever the names in it hold (`\x0a`). */
const printableLine = (text: string): string => inline(text).replaceAll(MARK, ESC);

/** What the environment allows: decided once per run from the streams, the flags and the variables. */
export interface OutputMode {
  /** `--json`: machine output on stdout, nothing else there. */
  json: boolean;
  /** `--quiet`: only the essential value (an id), no status lines. */
  quiet: boolean;
  /** Colours on stdout and stderr. */
  color: boolean;
  /**
   * Colours on stderr too (default: as `color`): not when stderr goes to a file or a pipe while
   * stdout is a terminal (`convene send hi 2>log`), unless FORCE_COLOR says so.
   */
  colorStderr?: boolean;
  /** Spinners on stderr. */
  spin: boolean;
  /** Prompts for what is missing (stdin and stdout are a terminal, no CI or agent). */
  interactive: boolean;
}

/**
 * Plain text unless a human is at a terminal: not when stdout is not a TTY, nor with NO_COLOR,
 * CI or AI_AGENT set (FORCE_COLOR forces colours, for people who pipe into `less -R`).
 */
export function detectMode(
  flags: { json?: boolean; quiet?: boolean; color?: boolean },
  env: NodeJS.ProcessEnv = process.env,
  streams: { stdin: { isTTY?: boolean }; stdout: { isTTY?: boolean }; stderr: { isTTY?: boolean } } = process,
): OutputMode {
  // A switch is off empty, `0` or `false` (`CI=false`, as CI tools read it); NO_COLOR is on with any
  // value but the empty one (no-color.org: "regardless of its value").
  const set = (name: string) => env[name] !== undefined && !/^(|0|false)$/i.test(env[name]);
  const automated = set('CI') || set('AI_AGENT');
  const plain = automated || Boolean(env.NO_COLOR) || env.TERM === 'dumb' || flags.color === false;
  const json = flags.json === true;
  return {
    json,
    quiet: flags.quiet === true,
    color: set('FORCE_COLOR') ? flags.color !== false : Boolean(streams.stdout.isTTY) && !plain,
    colorStderr: set('FORCE_COLOR')
      ? flags.color !== false
      : Boolean(streams.stdout.isTTY) && Boolean(streams.stderr.isTTY) && !plain,
    spin: Boolean(streams.stderr.isTTY) && !plain && !json && flags.quiet !== true,
    interactive: Boolean(streams.stdin.isTTY) && Boolean(streams.stdout.isTTY) && !automated,
  };
}

export interface Column<Row> {
  header: string;
  value: (row: Row) => string;
  style?: (text: string, row: Row) => string;
  /** A value to copy whole (a command line, a status as the API words it): never cut to fit a terminal. */
  whole?: boolean;
  /**
   * An id, which every command also takes by its start: whole while the table fits a terminal with
   * it, else shortened to the start that still tells its rows apart, 8 characters at least (as a
   * message's id shows), without `…`, so that it can be copied as it is.
   */
  id?: boolean;
  /** A mark after the value (` (you)`), never cut: a value cut to fit a terminal keeps it. */
  mark?: (row: Row) => string | undefined;
}

/** A terminal's width; 80 when it reports none (a pipe) or 0 (a terminal without a size). */
export function terminalColumns(stream: { columns?: number }): number {
  return stream.columns || 80;
}

export interface Spinner {
  message(text: string): void;
  stop(text?: string): void;
  fail(text?: string): void;
}

/** What ends a followed stream (`tail`, `inbox --follow`) by itself, with exit 0. */
export type FollowEnd = 'closed' | 'expired' | 'left';

/** That end in words, `name` the space's as the command shows it (quoted). */
export const followEnded = (reason: FollowEnd, name: string): string =>
  reason === 'left'
    ? `You left ${name} (elsewhere): nothing more will come.`
    : `${name} ${reason === 'expired' ? 'expired' : 'was closed'}: nothing more will come.`;

/**
 * Every byte the CLI prints goes through here. Data on stdout; status, hints and errors on stderr.
 * Text from others (names, messages, documents, a server's words) is printed with its control
 * characters neutralised, wherever a command puts it; only `raw` to a file or a pipe, and JSON
 * (which escapes them), carry it as it is.
 */
export class Output {
  /** Colours: they neutralise what they wrap too, so `c.bold(name)` is safe to print. */
  readonly c: Colors;

  constructor(
    readonly mode: OutputMode,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
    private readonly stderr: NodeJS.WritableStream = process.stderr,
  ) {
    this.c = markedColors(mode.color);
  }

  /** A line of data on stdout. */
  line(text = ''): void {
    this.stdout.write(`${printable(text)}\n`);
  }

  /** Text of several lines on stdout (a document's content), ending with a newline. */
  text(text: string): void {
    this.stdout.write(printable(text.endsWith('\n') || text === '' ? text : `${text}\n`));
  }

  /**
   * Data as it is, byte for byte, to a file or a pipe (a downloaded document, a completion
   * script); on a terminal, which would act on its control characters, neutralised as any text.
   */
  raw(text: string): void {
    this.stdout.write((this.stdout as { isTTY?: boolean }).isTTY ? printable(text) : text);
  }

  /** A value in `--json` mode: the API's own field names, indented for people and parsers alike. */
  json(value: unknown): void {
    this.stdout.write(`${toJson(value, 2)}\n`);
  }

  /** One NDJSON record (`tail --json`). */
  jsonLine(value: unknown): void {
    this.stdout.write(`${toJson(value)}\n`);
  }

  /**
   * Resolves once what was printed on stdout has been handed to the reader (the terminal, the
   * pipe, the file), and rejects when it could not be: a reader that went away (`| head -1`
   * exited). For what must not count as read before it is: an acknowledgement.
   */
  delivered(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.stdout.write('', (error?: Error | null) => (error ? reject(error) : resolve()));
    });
  }

  /**
   * The one way a command reports its result: JSON with `--json`, the essential value with
   * `--quiet`, else the human rendering.
   */
  result(value: unknown, render: { human: () => void; quiet?: () => string | undefined }): void {
    if (this.mode.json) this.json(value);
    else if (this.mode.quiet) {
      const essential = render.quiet?.();
      if (essential !== undefined) this.line(essential);
    } else render.human();
  }

  /** A status line on stderr (`✓ Created …`), one line; silent with --json or --quiet. */
  success(text: string): void {
    if (this.mode.json || this.mode.quiet) return;
    this.toStderr(`${printableLine(`${this.c.green('✓')} ${text}`)}\n`);
  }

  /** Progress or context on stderr, one line; silent with --json or --quiet. */
  info(text: string): void {
    if (this.mode.json || this.mode.quiet) return;
    this.toStderr(`${printableLine(text)}\n`);
  }

  /** What to try next, on stderr; silent with --json or --quiet. */
  hint(text: string): void {
    if (this.mode.json || this.mode.quiet) return;
    this.toStderr(`${printable(this.c.dim(text))}\n`);
  }

  /**
   * A warning on stderr, always shown (but never on stdout). With --json it is one line of JSON,
   * `{"warning": …}`, as an error is `{"error": …}` there: a script reading stderr meets one format.
   */
  warn(text: string): void {
    if (this.mode.json) this.toStderr(`${toJson({ warning: text })}\n`);
    else this.toStderr(`${printable(`${this.c.yellow('!')} ${text}`)}\n`);
  }

  /**
   * With --json, how a followed stream ended by itself (exit 0, as Ctrl-C is): one line of JSON on
   * stderr, `{"ended": "closed" | "expired" | "left", "message": …}`, so that a script tells the end
   * of a space from its own stop. Without --json each command says it in its own words.
   */
  endedJson(reason: FollowEnd, name: string): void {
    if (this.mode.json) this.toStderr(`${toJson({ ended: reason, message: followEnded(reason, name) })}\n`);
  }

  /** An error on stderr: what went wrong on one line (a name in it cannot start another), then the hint. */
  error(message: string, hint?: string): void {
    this.toStderr(`${printableLine(`${this.c.red('✗')} ${message}`)}\n`);
    if (hint) this.toStderr(`${printable(this.c.dim(hint))}\n`);
  }

  /**
   * Holds back what would go to stderr while `during` runs (an editor that has the whole screen,
   * over which a warning would be drawn, and lost when it redraws), then prints it once it is over,
   * in order, each line once: a heartbeat failing every few seconds says so once.
   */
  async holding<T>(during: () => Promise<T>): Promise<T> {
    const outer = this.held;
    this.held ??= [];
    try {
      return await during();
    } finally {
      if (outer === undefined) {
        const held = this.held;
        this.held = undefined;
        for (const line of held) this.stderr.write(line);
      }
    }
  }

  /** Lines for stderr held back by `holding`, each once; undefined when nothing is held. */
  private held: string[] | undefined;

  private toStderr(text: string): void {
    // Every ESC left in a printable line is a colour of the CLI's own (what it quotes is neutralised).
    const line = this.mode.colorStderr === false ? text.replace(SGR, '') : text;
    if (this.held === undefined) this.stderr.write(line);
    else if (!this.held.includes(line)) this.held.push(line);
  }

  /** Label/value pairs, labels aligned. Empty values are left out. */
  fields(pairs: [label: string, value: string | undefined][]): void {
    const shown = pairs.filter((p): p is [string, string] => p[1] !== undefined && p[1] !== '');
    const width = Math.max(0, ...shown.map(([label]) => label.length));
    for (const [label, value] of shown) {
      const [first, ...rest] = value.split('\n');
      this.line(`${this.c.dim(label.padEnd(width))}  ${first}`);
      for (const more of rest) this.line(`${' '.repeat(width)}  ${more}`);
    }
  }

  /**
   * Rows in aligned columns without a header, each after `indent` (a list within a page: `space
   * show`'s participants and documents); a cell is one line, as in `table`. `style` colours a
   * cell once it is padded.
   */
  columns(
    rows: readonly (readonly Cell[])[],
    {
      indent = '',
      style,
      whole = [],
    }: {
      indent?: string;
      style?: (text: string, row: number, column: number) => string;
      /** The columns never cut to fit a terminal (as a table's `whole`). */
      whole?: readonly number[];
    } = {},
  ): void {
    const values = rows.map((row) => row.map((cell) => inline(typeof cell === 'string' ? cell : cell.value)));
    const marks = rows.map((row) => row.map((cell) => (typeof cell === 'string' ? '' : inline(cell.mark))));
    const widths = (values[0] ?? []).map((_, i) =>
      Math.max(...values.map((row, r) => visibleLength(row[i]! + marks[r]![i]!))),
    );
    const cells = this.laidOut(
      values,
      marks,
      widths,
      { floor: () => 0, whole: (i) => whole.includes(i), id: () => false },
      indent.length,
    );
    cells.forEach((row, r) => {
      const line = row.map((cell, i) => {
        const text = i === row.length - 1 ? cell : cell + ' '.repeat(widths[i]! - visibleLength(cell));
        return style ? style(text, r, i) : text;
      });
      this.line(`${indent}${line.join('  ')}`.trimEnd());
    });
  }

  /**
   * The cells of `columns` and `table`, each value with its mark. On a terminal narrower than
   * `widths` (less `margin`), they are narrowed (in place) and the values cut as `fitted` says, in
   * three steps, each taken only when the one before leaves the table too wide: the values cut down
   * to `floor`, 8, or their marks and four more; then the `id` columns shortened to the start that
   * tells their rows apart (8 at least); then the values cut down to `floor` alone, or their marks
   * and two more (one character and `…`), when that makes the table fit. A `whole` column is
   * never cut; what still does not fit wraps. Piped, all whole.
   */
  private laidOut(
    values: string[][],
    marks: string[][],
    widths: number[],
    {
      floor,
      whole,
      id,
    }: {
      floor: (column: number) => number;
      whole: (column: number) => boolean;
      id: (column: number) => boolean;
    },
    margin = 0,
  ): string[][] {
    const asIs = values.map((row, r) => row.map((value, i) => value + marks[r]![i]!));
    const terminal = this.stdout as { isTTY?: boolean; columns?: number };
    if (!terminal.isTTY) return asIs;
    const room = terminalColumns(terminal) - margin;
    const markWidth = (i: number) => Math.max(0, ...marks.map((row) => visibleLength(row[i]!)));
    const natural = [...widths];
    const least = (i: number, width: number, cutDeeper: boolean) =>
      whole(i) || id(i)
        ? width
        : Math.min(
            width,
            cutDeeper ? Math.max(floor(i), markWidth(i) + 2, 2) : Math.max(floor(i), 8, markWidth(i) + 4),
          );
    /** The widths narrowed for the room as far as `least` lets them, with whether they fit. */
    const attempt = (starts: readonly (number | undefined)[], cutDeeper: boolean) => {
      const tried = natural.map((width, i) => {
        const start = starts[i];
        return start === undefined ? width : Math.max(start, floor(i));
      });
      const fits = fitted(
        tried,
        tried.map((width, i) => least(i, width, cutDeeper)),
        room,
      );
      return { tried, fits };
    };
    const use = (tried: readonly number[]) =>
      tried.forEach((width, i) => {
        widths[i] = width;
      });
    if (total(natural) <= room) return asIs;
    const first = attempt([], false);
    use(first.tried);
    if (first.fits) return cut(values, marks, widths);
    // The ids shortened, each column's to the start that its rows need to be told apart.
    const starts = natural.map((_, i) => (id(i) ? distinctStart(values.map((row) => row[i]!)) : undefined));
    const shortened = values.map((row) =>
      row.map((value, i) => {
        const start = starts[i];
        return start === undefined ? value : value.slice(0, start);
      }),
    );
    const second = attempt(starts, false);
    use(second.tried);
    if (second.fits) return cut(shortened, marks, widths);
    // Cut deeper only when that makes the table fit: a table that wraps all the same keeps more of
    // each value.
    const third = attempt(starts, true);
    if (third.fits) use(third.tried);
    return cut(shortened, marks, widths);
  }

  /**
   * Rows in aligned columns under a header; `empty` when there are none. On a terminal, a table
   * wider than it is fitted to its width (as gh and kubectl do): the widest columns are cut, each
   * cut value ending with `…`, down to their header's width or 8 columns at least; then, if need
   * be, its ids are shortened to their start (8 characters at least) and the values cut down to
   * their header's width (see laidOut); piped, every value is whole (and --json has them all).
   */
  table<Row>(rows: Row[], columns: Column<Row>[], empty: string): void {
    if (rows.length === 0) {
      this.info(this.c.dim(empty));
      return;
    }
    // A cell is one line: a name with a newline in it must not break the table.
    const values = rows.map((row) => columns.map((column) => inline(column.value(row))));
    const marks = rows.map((row) => columns.map((column) => inline(column.mark?.(row) ?? '')));
    const widths = columns.map((column, i) =>
      Math.max(
        visibleLength(column.header),
        ...values.map((row, r) => visibleLength(row[i]! + marks[r]![i]!)),
      ),
    );
    const cells = this.laidOut(values, marks, widths, {
      floor: (i) => visibleLength(columns[i]!.header),
      whole: (i) => columns[i]!.whole === true,
      id: (i) => columns[i]!.id === true,
    });
    const pad = (text: string, i: number) =>
      i === columns.length - 1 ? text : text + ' '.repeat(widths[i]! - visibleLength(text));
    this.line(columns.map((column, i) => this.c.bold(pad(column.header.toUpperCase(), i))).join('  '));
    rows.forEach((row, r) => {
      this.line(
        columns
          .map((column, i) => {
            const text = pad(cells[r]![i]!, i);
            return column.style ? column.style(text, row) : text;
          })
          .join('  ')
          .trimEnd(),
      );
    });
  }

  /**
   * A spinner on stderr while something takes time; without a terminal, each message once (so a
   * log still shows what the process waits for), and nothing with --json or --quiet.
   */
  spinner(text: string): Spinner {
    if (!this.mode.spin) {
      this.info(`${text}…`);
      let shown = text;
      return {
        message: (next) => {
          if (next === shown) return;
          shown = next;
          this.info(`${next}…`);
        },
        stop: (done) => done && this.success(done),
        fail: (failed) => failed && this.info(failed),
      };
    }
    return terminalSpinner(this.stderr, this.c, text);
  }
}

/**
 * The spinner a person sees: redrawn on one line of stderr. Its own, not the prompt library's:
 * that one puts the terminal in raw mode, where Ctrl-C is a key it answers with "Canceled" and
 * exit 0 instead of the SIGINT every wait here ends on (130, with what to do next).
 */
function terminalSpinner(stderr: NodeJS.WritableStream, c: Colors, text: string): Spinner {
  const frames = ['◒', '◐', '◓', '◑'];
  const showCursor = () => stderr.write('\u001b[?25h');
  const hideCursor = () => stderr.write('\u001b[?25l');
  let shown = text;
  let frame = 0;
  const draw = () => {
    // One line, whatever the terminal's width now: a line that wraps is redrawn under itself.
    const room = terminalColumns(stderr as { columns?: number }) - 4;
    const line = `${c.magenta(frames[frame++ % frames.length]!)}  ${truncate(inline(shown), Math.max(room, 1))}`;
    stderr.write(`\r\u001b[2K${printableLine(line)}`);
  };
  // Ctrl-Z: the shell gets its cursor back while convene is stopped, and the spinner its own after.
  const suspend = () => {
    showCursor();
    process.removeListener('SIGTSTP', suspend);
    process.kill(process.pid, 'SIGTSTP');
  };
  const resume = () => {
    hideCursor();
    process.on('SIGTSTP', suspend);
  };
  hideCursor();
  process.once('exit', showCursor);
  process.on('SIGTSTP', suspend);
  process.on('SIGCONT', resume);
  draw();
  const timer = setInterval(draw, 80);
  timer.unref();
  let running = true;
  const end = (mark: string, last: string) => {
    if (!running) return;
    running = false;
    clearInterval(timer);
    process.removeListener('exit', showCursor);
    process.removeListener('SIGTSTP', suspend);
    process.removeListener('SIGCONT', resume);
    // One space after the mark, as every other status line has (the frames take two).
    stderr.write(`\r\u001b[2K${printableLine(`${mark} ${last}`)}\n`);
    showCursor();
  };
  return {
    message: (next) => {
      shown = next;
    },
    stop: (done) => end(c.green('✓'), done ?? shown),
    fail: (failed) => end(c.red('▲'), failed ?? shown),
  };
}

/** A cell of `columns`: its text, or a value and a mark after it that is never cut (` (you)`). */
export type Cell = string | { value: string; mark: string };

/** Each value cut to its column's width, its mark after it whole. */
const cut = (values: string[][], marks: string[][], widths: readonly number[]): string[][] =>
  values.map((row, r) =>
    row.map((value, i) => {
      const mark = marks[r]![i]!;
      return truncate(value, widths[i]! - visibleLength(mark)) + mark;
    }),
  );

/** The columns a row of `widths` takes, with the two spaces between them. */
const total = (widths: readonly number[]): number =>
  widths.reduce((sum, width) => sum + width, 2 * (widths.length - 1));

/**
 * Narrows `widths` (in place) until the columns and the two spaces between them fit in `room`:
 * one column at a time off the widest that may still be cut, down to its `least`. Whether they fit.
 */
function fitted(widths: number[], least: readonly number[], room: number): boolean {
  let sum = total(widths);
  while (sum > room) {
    let widest = -1;
    widths.forEach((width, i) => {
      if (width > least[i]! && (widest < 0 || width > widths[widest]!)) widest = i;
    });
    if (widest < 0) return false;
    widths[widest]!--;
    sum--;
  }
  return true;
}

/**
 * How many characters of each id the rows need to be told apart: 8 at least (a message's id
 * shows so many), more where two share their start, all of the longest when two are the same.
 */
function distinctStart(ids: readonly string[]): number {
  const longest = Math.max(0, ...ids.map((id) => id.length));
  for (let length = 8; length < longest; length++) {
    if (new Set(ids.map((id) => id.slice(0, length))).size === new Set(ids).size) return length;
  }
  return longest;
}

/**
 * The columns a text takes on a terminal, colours left out: a CJK character takes two, as most
 * emoji do, and a combining accent none; counting characters would put table columns out of line.
 */
const visibleLength = (text: string) => stringWidth(text.replace(MARKED_SGR, ''));

/** Made on first use: making one loads ICU's rules, 11 ms of every start, most of which cut nothing. */
let graphemes: Intl.Segmenter | undefined;

/**
 * Text (without colours) cut to take at most `width` columns on a terminal, ending with `…` where
 * it was cut; whole characters only (an accent stays on its letter, an emoji is not split).
 */
export function truncate(text: string, width: number): string {
  if (stringWidth(text) <= width) return text;
  let kept = '';
  let used = 0;
  graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  for (const { segment } of graphemes.segment(text)) {
    const w = stringWidth(segment);
    if (used + w > width - 1) break;
    kept += segment;
    used += w;
  }
  return `${kept}…`;
}
