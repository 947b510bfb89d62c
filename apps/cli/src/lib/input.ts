import { fstatSync, readFileSync } from 'node:fs';
import { limits } from '@convene/sdk';
import { commandLine } from './command-line';
import type { Context } from './context';
import { UsageError } from './errors';
import { fileError } from './failure';
import { inline } from './output';
import { verbatim } from './quote';
import { size } from './render';

/** How long stdin may stay open with nothing in it before convene says it is waiting for it. */
export const QUIET_STDIN_MS = 5000;
/** Told once a read of stdin has waited QUIET_STDIN_MS for its first byte (the context warns). */
let onQuietStdin: ((text: string) => void) | undefined;
export const whenStdinIsQuiet = (say: (text: string) => void): void => {
  onQuietStdin = say;
};

/**
 * All of stdin as text; with `maxBytes`, it stops reading once there is more than that (a pipe
 * may never end), so what it returns is then longer than `maxBytes`, not all there was. A stdin
 * left open with nothing in it (a CI runner's, a pipe from a command still running) is waited
 * for, as cat does, and said after QUIET_STDIN_MS: a script otherwise hung without a word.
 */
export async function readStdin(maxBytes = Number.POSITIVE_INFINITY): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  const quiet = setTimeout(
    () =>
      onQuietStdin?.(
        `waiting for stdin, which is open but has brought nothing for ${QUIET_STDIN_MS / 1000} s (if nothing is to come, close it: < /dev/null)`,
      ),
    QUIET_STDIN_MS,
  );
  quiet.unref();
  try {
    for await (const chunk of process.stdin) {
      clearTimeout(quiet);
      chunks.push(chunk as Buffer);
      bytes += (chunk as Buffer).length;
      // More than the limit, refused as too large by the caller: the rest is not read, and a
      // character cut in two at the end of what was is no reason to call it something else.
      if (bytes > maxBytes) return utf8(Buffer.concat(chunks), 'stdin', true);
    }
  } finally {
    clearTimeout(quiet);
  }
  return utf8(Buffer.concat(chunks), 'stdin');
}

/**
 * `bytes` as text, or a usage error naming `source` when they are not UTF-8 (a Latin-1 file, a
 * binary one): Node's decoding would put U+FFFD in place of each byte it cannot read, and what
 * was sent would not be what the file holds, said nowhere. `cut`: the bytes end where reading
 * stopped, perhaps inside a character.
 */
function utf8(bytes: Buffer, source: string, cut = false): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes, { stream: cut });
  } catch {
    throw new UsageError(
      `${source} is not UTF-8 text (a file in another encoding, or not text at all): nothing was sent`,
      'Convert it first: `iconv -f ENCODING -t utf-8 FILE` (ENCODING such as latin1, or utf-16).',
    );
  }
}

/** The text of `--file F` (`-` reads stdin, up to `maxBytes` as readStdin reads it). */
export async function readTextFile(path: string, maxBytes = Number.POSITIVE_INFINITY): Promise<string> {
  if (path === '-') return readStdin(maxBytes);
  try {
    return utf8(readFileSync(path), path);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    // A directory's read error does not name the path: give it, to explain it like any other.
    throw fileError(Object.assign(error as NodeJS.ErrnoException, { path }));
  }
}

/**
 * Whether something was piped or redirected into stdin (`… | convene`, `convene < F`): a pipe or a
 * regular file. Not a terminal, nor /dev/null, nor a socket, which is what test harnesses (Node's
 * child_process) and some runners give a command with nothing to read in it: waiting would hang.
 */
export function stdinIsPiped(): boolean {
  try {
    const stdin = fstatSync(0);
    return stdin.isFIFO() || stdin.isFile();
  } catch {
    return false;
  }
}

/**
 * A document's content from `--file F` (`-` reads stdin), else from stdin when something is piped
 * or redirected into it; `undefined` when neither. `stdin` says whether it came from there. More
 * than a document holds (1 MiB in UTF-8) is a usage error in those terms, before anything is sent:
 * the server would refuse it as a field too long, or past 2 MiB as a request body too large.
 */
export async function readDocument(
  file: string | undefined,
): Promise<{ content: string; stdin: boolean } | undefined> {
  const path = file ?? (stdinIsPiped() ? '-' : undefined);
  if (path === undefined) return undefined;
  const max = limits.artifactContentMax;
  const content = await readTextFile(path, max);
  if (Buffer.byteLength(content) > max) {
    throw new UsageError(
      `${path === '-' ? 'stdin' : path} is too large: a document holds at most ${max / 2 ** 20} MiB (${max} bytes in UTF-8)`,
      'Split it into several documents.',
    );
  }
  return { content, stdin: path === '-' };
}

/**
 * A name given on the command line (a space's, yours in it, a document's, a token's). One of
 * spaces alone is a name nobody can read in a list or type back: a usage error, as an empty one
 * is, said before anything is sent (the server refuses it too, 400 `name must not be blank`).
 */
export function checkName<T extends string | undefined>(value: T, what: string): T {
  if (value !== undefined && value.trim() === '') {
    throw new UsageError(`${what} cannot be blank`, 'Give a name with something other than spaces in it.');
  }
  return value;
}

/** A count option (--limit, --lines): a whole number, 0 or more; `zero` says what 0 means. */
export function parseCount(value: string, flag: string, zero?: string): number {
  if (!/^\d+$/.test(value)) {
    throw new UsageError(
      `${flag} must be 0 or a positive whole number${zero ? ` (0: ${zero})` : ''}, not "${value}"`,
    );
  }
  return Number(value);
}

/** `--wait <seconds>` of a long poll (inbox, messages): a whole number from 0 to 60, or none. */
export function parseWait(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const wait = Number(value);
  if (!/^\d+$/.test(value) || wait > 60)
    throw new UsageError(`--wait must be a whole number of seconds from 0 to 60, not "${value}"`);
  return wait;
}

const VERSION = /^[1-9]\d*$/;

/**
 * A version number given on the command line (VERSION, FROM, --base-version): 1, 2, … With the
 * document's argument before it (`after`) a version and this one not (`restore 2 plan.md`), the
 * hint gives them in their order.
 */
export function checkVersion(
  value: string | undefined,
  label: string,
  after?: { artifact: string | undefined; command: string },
): void {
  if (value !== undefined && !VERSION.test(value)) {
    const swapped = after?.artifact !== undefined && VERSION.test(after.artifact);
    throw new UsageError(
      `${label} must be a version number (1, 2, …), not "${value}"`,
      swapped
        ? `The document comes first, then the version: \`${commandLine(after.command, { args: [value, verbatim(after.artifact!)] })}\`.`
        : undefined,
    );
  }
}

/** Refuses to wait for stdin that nobody will type into: a terminal with nothing piped. */
export function assertPiped(what: string): void {
  if (process.stdin.isTTY) {
    throw new UsageError(
      `${what} reads stdin, but nothing is piped in`,
      `Pipe it: echo "…" | convene ${what}`,
    );
  }
}

/**
 * The space a command that takes SPACE as its argument was given, as its argument or with
 * `-s, --space` (which every command acting on a space takes, so a script may pass it everywhere).
 * Both are resolved (a name in any case, an id, the start of one), so one space named two ways is
 * that space; two different spaces are a usage error: acting on either could be the wrong one.
 */
export function spaceNamed(
  ctx: Pick<Context, 'space'>,
  argument: string | undefined,
  option: string | undefined,
  command: string,
): string | undefined {
  if (argument === undefined || option === undefined || argument === option) return option ?? argument;
  // Each must name a saved space (else its own error: not found, no key); the option's last, as
  // the space the command acts on.
  if (ctx.space(argument).spaceId === ctx.space(option).spaceId) return option;
  throw new UsageError(
    `two spaces named: "${argument}" as SPACE and "${option}" with --space`,
    `Name the space once: \`${command} SPACE\` or \`${command} --space SPACE\`.`,
  );
}

/** The media types an image message's data: URI may have, by the bytes their files start with. */
const IMAGE_TYPES: readonly { type: string; is: (bytes: Buffer) => boolean }[] = [
  { type: 'image/png', is: (b) => b.subarray(0, 8).equals(Buffer.from('89504e470d0a1a0a', 'hex')) },
  { type: 'image/jpeg', is: (b) => b.subarray(0, 3).equals(Buffer.from('ffd8ff', 'hex')) },
  { type: 'image/gif', is: (b) => /^GIF8[79]a/.test(b.subarray(0, 6).toString('latin1')) },
  {
    type: 'image/webp',
    is: (b) =>
      b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
  },
];

/**
 * `send --image VALUE`: an address (an https: URL, a data: URI, anything with a scheme, which the
 * server judges) as it is; else the path of a PNG, JPEG, GIF or WebP file, sent as the data: URI
 * of its type (told by its bytes, not its name), which the server takes up to
 * `limits.imageDataUriMax` characters: a file past that, or not such an image, is a usage error
 * before anything is sent. A data: URI that large cannot be typed on a command line (Linux takes
 * an argument of 128 KiB at most), so a file is how a larger image is sent.
 */
export function imageContent(value: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(value)) {
    // As the server takes them: https: in any case, data: as it is spelt (the server checks the rest).
    if (/^https:/i.test(value) || value.startsWith('data:image/')) return value;
    // Said here, as the file's checks are, rather than as the server's 400 after a round trip.
    throw new UsageError(
      `--image takes an https: URL, a data:image/…;base64, URI or an image file, not "${inline(value)}": nothing was sent`,
      /^http:/i.test(value)
        ? 'Pages show images over https: only: give its https: address, or download it and give the file.'
        : undefined,
    );
  }
  let bytes: Buffer;
  try {
    bytes = readFileSync(value);
  } catch (error) {
    throw fileError(Object.assign(error as NodeJS.ErrnoException, { path: value }));
  }
  const type = IMAGE_TYPES.find((candidate) => candidate.is(bytes))?.type;
  if (type === undefined)
    throw new UsageError(
      `${value} is not a PNG, JPEG, GIF or WebP image: nothing was sent`,
      'An image message is one of those, given as a file, an https: URL or a data:image/…;base64, URI.',
    );
  const prefix = `data:${type};base64,`;
  // Base64 writes 3 bytes as 4 characters.
  const fits = Math.floor((limits.imageDataUriMax - prefix.length) / 4) * 3;
  if (bytes.length > fits)
    throw new UsageError(
      `${value} is too large to send as an image: ${size(bytes.length)}, where ${size(fits)} fit (a data: URI of ${size(limits.imageDataUriMax)} at most)`,
      'Make it smaller (fewer pixels, or JPEG or WebP), or send an https: URL of it.',
    );
  return `${prefix}${bytes.toString('base64')}`;
}
