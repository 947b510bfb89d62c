import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * PGlite does not lock its data directory, and two processes on one directory silently diverge.
 * A lock file holding the owner's pid makes a second server refuse to start; a lock left by a
 * crashed process (its pid is gone) is taken over.
 */
export function lockDataDir(dataDir: string): () => void {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'convene.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
      if (Number.isInteger(pid) && isAlive(pid)) {
        throw new DataDirInUseError(dir, pid);
      }
      rmSync(file, { force: true });
    }
  }
  throw new DataDirInUseError(dir, null);
}

export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number | null,
  ) {
    super(
      `data directory ${dataDir} is in use by another Convene server${pid ? ` (pid ${pid})` : ''}; ` +
        'stop it, or start this one with another DATA_DIR or a DATABASE_URL',
    );
    this.name = 'DataDirInUseError';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
