import { inline } from './output';

/**
 * A name (or a path) as one shell word a hint can suggest, so that the line pastes as it is into
 * bash or zsh: in double quotes; in single quotes when the shell would read something in double
 * ones (`$`, `\`, `"`, and `!` in bash); both of which any POSIX shell reads too. A name that
 * holds a character a terminal would act on or that would break the line (a newline, a tab, ESC,
 * a bidirectional override: what `inline` shows escaped), or a backquote, which would end the
 * backquoted command line of the hint around it, is in ANSI-C quotes, `$'plan\nv2.md'`, each such
 * character written as an escape the shell turns back into it. Every hint that names something a
 * person gave goes through here.
 */
export function quoted(text: string): string {
  if (inline(text) !== text || text.includes('`')) return ansiC(text);
  return /["$`\\!]/.test(text) ? `'${text.replaceAll("'", `'\\''`)}'` : `"${text}"`;
}

/**
 * A word of ours in a command line a hint suggests, written as it is: a placeholder (`F`, `NAME`),
 * a number, an id, a path already made a shell word (`shellWord`). Never one that starts with `-`.
 */
export interface Verbatim {
  readonly verbatim: string;
}

export const verbatim = (text: string | number): Verbatim => ({ verbatim: String(text) });

/** A value in a command line a hint suggests: a name a person gave (`quoted` there), or a word of ours. */
export type Value = string | Verbatim;

/** A value as its shell word. */
export const shellValue = (value: Value): string =>
  typeof value === 'string' ? quoted(value) : value.verbatim;

/**
 * A word a hint suggests that is usually plain (a path, an email): as it is when the shell reads
 * it so (letters, digits and `_@%+=:,./-`, as Python's shlex.quote keeps), else `quoted`.
 */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : quoted(text);
}

/** The names of the escapes `$'…'` reads; any other character of those escaped is its bytes. */
const NAMED: Record<string, string> = { '\n': '\\n', '\t': '\\t', '\r': '\\r', "'": "\\'", '\\': '\\\\' };

/**
 * `$'…'`: the characters `inline` would show escaped, and backquotes, written as their UTF-8 bytes
 * in octal (`\033` for ESC, `\342\200\256` for U+202E, `\140` for a backquote), which take
 * exactly three digits whatever follows (a hexadecimal `\x` escape followed by a letter a to f is
 * read differently by different shells); `!` as `\041`, which older bash would expand from its
 * history even there.
 */
function ansiC(text: string): string {
  let body = '';
  for (const char of text) {
    const named = NAMED[char];
    if (named !== undefined) body += named;
    else if (char === '!' || char === '`' || inline(char) !== char)
      for (const byte of Buffer.from(char)) body += `\\${byte.toString(8).padStart(3, '0')}`;
    else body += char;
  }
  return `$'${body}'`;
}
