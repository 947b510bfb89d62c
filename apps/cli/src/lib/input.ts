import { readFileSync } from 'node:fs';
import { UsageError } from './errors';
import { fileError } from './failure';

/** All of stdin as text. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The text of `--file F` (`-` reads stdin). */
export async function readTextFile(path: string): Promise<string> {
  if (path === '-') return readStdin();
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    // A directory's read error does not name the path: give it, to explain it like any other.
    throw fileError(Object.assign(error as NodeJS.ErrnoException, { path }));
  }
}

/**
 * A name given on the command line (a space's, yours in it, a document's, a token's). The server
 * takes any string that is not empty, but one of spaces alone is a name nobody can read in a list
 * or type back: a usage error, as an empty one is.
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

/** A version number given on the command line (VERSION, FROM, --base-version): 1, 2, … */
export function checkVersion(value: string | undefined, label: string): void {
  if (value !== undefined && !/^[1-9]\d*$/.test(value)) {
    throw new UsageError(`${label} must be a version number (1, 2, …), not "${value}"`);
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
