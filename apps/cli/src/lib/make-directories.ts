import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * `mkdir -p`, a level at a time from the nearest one that exists: Node's own recursive mkdir
 * never ends where a level cannot be made and does not exist either (`XDG_CONFIG_HOME=/proc/nope`:
 * ENOENT, which it takes for a missing parent, forever, at 100% of a core, deaf to Ctrl-C). Levels
 * that exist are left as they are; `mode` is each new one's. The server's data directory has the
 * same in core (fs/make-directories.ts): the CLI is built on the SDK alone, and keeps its own.
 */
export function makeDirectories(dir: string, mode: number): void {
  const missing: string[] = [];
  for (let level = resolve(dir); ; level = dirname(level)) {
    try {
      if (statSync(level).isDirectory()) break;
      // A file where a directory should be: mkdir says so (EEXIST), as it would anyway.
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    missing.push(level);
    if (dirname(level) === level) break;
  }
  for (const level of missing.reverse()) {
    try {
      mkdirSync(level, { mode });
    } catch (error) {
      // Made meanwhile (another process starting on it): there it is.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(level).isDirectory()) throw error;
    }
  }
}
