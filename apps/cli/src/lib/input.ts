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

/** Refuses to wait for stdin that nobody will type into: a terminal with nothing piped. */
export function assertPiped(what: string): void {
  if (process.stdin.isTTY) {
    throw new UsageError(
      `${what} reads stdin, but nothing is piped in`,
      `Pipe it: echo "…" | convene ${what}`,
    );
  }
}
