import {
  chmodSync,
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The embedded database's directory holds every key hash, message and document, and PGlite
 * writes its files as the umask allows (0644, or 0666 under umask 0): the directory is what keeps
 * other users out. It is created 0700; one this process's user owns that others may enter or
 * read is closed to 0700, and `onTightened` told (the server logs it). One owned by someone else
 * is left as it is.
 */
function makeDataDirPrivate(dataDir: string, onTightened: (message: string) => void = () => {}): void {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { mode, uid } = statSync(dir);
  const open = mode & 0o077;
  // No owner to compare with on Windows, where these modes mean nothing anyway.
  if (open === 0 || process.getuid === undefined || uid !== process.getuid()) return;
  chmodSync(dir, 0o700);
  onTightened(
    `data directory ${dir} was open to other users (mode ${(mode & 0o777).toString(8)}): made it private (700)`,
  );
}

/**
 * PGlite does not lock its data directory, and two processes on one directory silently diverge.
 * A lock file holding the owner's pid makes a second server refuse to start; a lock left by a
 * crashed process (its pid is gone) is taken over. The directory is made private first.
 */
export function lockDataDir(dataDir: string, onTightened?: (message: string) => void): () => void {
  const dir = resolve(dataDir);
  makeDataDirPrivate(dir, onTightened);
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
