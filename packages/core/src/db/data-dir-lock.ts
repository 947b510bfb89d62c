import { randomUUID } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  openSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { makeDirectories } from '../fs/make-directories';

/**
 * The embedded database's directory holds every key hash, message and document, and PGlite
 * writes its files as the umask allows (0644, or 0666 under umask 0): the directory is what keeps
 * other users out. It is created 0700; one this process's user owns that others may enter or
 * read is closed to 0700, and `onTightened` told (the server logs it). One owned by someone else
 * is left as it is.
 */
function makeDataDirPrivate(dataDir: string, onTightened: (message: string) => void = () => {}): void {
  const dir = resolve(dataDir);
  try {
    makeDirectories(dir, 0o700);
  } catch (error) {
    throw new DataDirUnusableError(dir, error as NodeJS.ErrnoException);
  }
  closeToOthers(dir, 0o700, 'data directory', onTightened);
}

/** A data directory that cannot be made or is no directory: said with DATA_DIR's name and the system's reason. */
export class DataDirUnusableError extends Error {
  constructor(
    readonly dataDir: string,
    cause: NodeJS.ErrnoException,
  ) {
    const why =
      cause.code === 'EEXIST' || cause.code === 'ENOTDIR'
        ? 'a file is in the way of it'
        : `${cause.code ?? 'error'}: ${cause.message.replace(/^[A-Z]+: /, '')}`;
    super(
      `data directory ${dataDir} cannot be used (${why}): set DATA_DIR (--data-dir) to a directory this user may create or write`,
      { cause },
    );
    this.name = 'DataDirUnusableError';
  }
}

/**
 * A file of ours under the data directory that no one else should read (the generated SECRET) is
 * made 0600 if others may read it (made by hand, or copied), and `onTightened` told.
 */
export function makeFilePrivate(file: string, onTightened: (message: string) => void = () => {}): void {
  closeToOthers(resolve(file), 0o600, 'file', onTightened);
}

function closeToOthers(
  path: string,
  privateMode: number,
  what: string,
  onTightened: (message: string) => void,
): void {
  const { mode, uid } = statSync(path);
  const open = mode & 0o077;
  // No owner to compare with on Windows, where these modes mean nothing anyway.
  if (open === 0 || process.getuid === undefined || uid !== process.getuid()) return;
  chmodSync(path, privateMode);
  onTightened(
    `${what} ${path} was open to other users (mode ${(mode & 0o777).toString(8)}): made it private (${privateMode.toString(8)})`,
  );
}

/**
 * This process as a lock file records it. A pid alone does not name a process: pids are reused,
 * and in a container the server is pid 1 at every start, so after a `kill -9` the lock named a
 * live process (the new server itself, or an unrelated one) and every restart refused. `instance`
 * tells this process from an earlier one that had its pid; `boot` (the kernel's boot id) and
 * `started` (field 22 of /proc/<pid>/stat, clock ticks since boot) tell the recorded process from
 * another that now has its pid. Where /proc is absent (macOS, Windows) only the pid is compared.
 */
interface LockOwner {
  pid: number;
  instance?: string | undefined;
  boot?: string | undefined;
  started?: string | undefined;
  /**
   * The directory it locked (its real path). A lock in another directory came with a copy of
   * that one, taken while a server ran on it (or after one crashed there): a copy of a running
   * server's directory named that server as its owner, and was refused as "in use".
   */
  dir?: string | undefined;
}

/** Tells this process's lock from an earlier process's that had the same pid. */
const INSTANCE = randomUUID();

/**
 * PGlite does not lock its data directory, and two processes on one directory silently diverge.
 * A lock file naming its owner makes a second server refuse to start; a lock left by a crashed
 * process is taken over: its pid is gone, is this process's own, or is now another process's
 * (another start time, or another boot). The directory is made private first. A lock that names
 * another directory came with a copy: refused as such while its owner runs (the copy was taken
 * hot), else taken over with `onCopied` told.
 */
export function lockDataDir(
  dataDir: string,
  onTightened?: (message: string) => void,
  onCopied?: (message: string) => void,
): () => void {
  const dir = resolve(dataDir);
  makeDataDirPrivate(dir, onTightened);
  const file = join(dir, 'convene.lock');
  const me: LockOwner = {
    pid: process.pid,
    instance: INSTANCE,
    boot: bootId(),
    started: procStat(process.pid)?.started,
    // Its real path: the same directory reached through a symbolic link is no copy.
    dir: realpathSync(dir),
  };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, `${JSON.stringify(me)}\n`);
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = readOwner(file);
      const copiedFrom = owner?.dir !== undefined && owner.dir !== me.dir ? owner.dir : undefined;
      if (owner && holds(owner, me)) throw new DataDirInUseError(dir, owner.pid, copiedFrom);
      if (copiedFrom !== undefined)
        onCopied?.(
          `data directory ${dir} was copied from ${copiedFrom} while a Convene server ran there, or after ` +
            'one stopped there without closing (a crash): it is opened as after a crash, and what was ' +
            'being written while it was copied may be missing or damaged. Take copies with the server stopped',
        );
      rmSync(file, { force: true });
    }
  }
  throw new DataDirInUseError(dir, null);
}

export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number | null,
    /** The directory its lock was made in, when it is another: `dataDir` is a copy of it. */
    readonly copiedFrom?: string,
  ) {
    super(
      copiedFrom === undefined
        ? `data directory ${dataDir} is in use by another Convene server${pid ? ` (pid ${pid})` : ''}; ` +
            'stop it, or start this one on another data directory (--data-dir, DATA_DIR) or on PostgreSQL (--database-url, DATABASE_URL)'
        : `data directory ${dataDir} was copied from ${copiedFrom} while the Convene server there ` +
            `(pid ${pid}) was running: no server uses this copy, but its files may be inconsistent ` +
            `(its lock file, ${join(dataDir, 'convene.lock')}, came with it). Stop that server, then copy ` +
            `${copiedFrom} again. To start on this copy as it is, delete its convene.lock: it is then ` +
            'opened as after a crash, and what was being written while it was copied may be missing or damaged',
    );
    this.name = 'DataDirInUseError';
  }
}

/** The lock's owner: JSON, or a bare pid as earlier versions wrote it; undefined when unreadable. */
function readOwner(file: string): LockOwner | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
  if (/^\d+$/.test(text)) return { pid: Number(text) };
  try {
    const parsed = JSON.parse(text) as Partial<Record<keyof LockOwner, unknown>>;
    if (!Number.isSafeInteger(parsed.pid) || (parsed.pid as number) <= 0) return undefined;
    const text_ = (value: unknown) => (typeof value === 'string' ? value : undefined);
    return {
      pid: parsed.pid as number,
      instance: text_(parsed.instance),
      boot: text_(parsed.boot),
      started: text_(parsed.started),
      dir: text_(parsed.dir),
    };
  } catch {
    return undefined;
  }
}

/** Whether the lock's recorded owner is a process running now (`me` is this process). */
function holds(owner: LockOwner, me: LockOwner): boolean {
  // Our own pid: this very process (a second open of the same directory), or one before it.
  if (owner.pid === me.pid) return owner.instance !== undefined && owner.instance === me.instance;
  // Recorded before the machine last started: every process of that boot is gone.
  if (owner.boot && me.boot && owner.boot !== me.boot) return false;
  if (!isAlive(owner.pid)) return false;
  const stat = procStat(owner.pid);
  // Dead but not yet reaped by its parent (a zombie, kill -9 a moment ago): it holds nothing.
  if (stat && (stat.state === 'Z' || stat.state === 'X')) return false;
  // Alive: the same process only if it started when the recorded one did.
  if (owner.started && stat?.started) return owner.started === stat.started;
  return true;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Process `pid`'s state (field 3 of /proc/<pid>/stat: `R`, `S`, `Z` for a zombie…) and when it
 * started (field 22, clock ticks since boot); undefined without a /proc of this process's pid
 * namespace: in a namespace whose /proc is the host's, /proc/<pid> is another process, and
 * /proc/self/stat's pid is not ours.
 */
function procStat(pid: number): { state: string | undefined; started: string | undefined } | undefined {
  const fields = (path: string) => {
    try {
      const stat = readFileSync(path, 'utf8');
      // The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
      const close = stat.lastIndexOf(')');
      return [stat.slice(0, stat.indexOf(' ')), ...stat.slice(close + 2).split(' ')];
    } catch {
      return undefined;
    }
  };
  const self = fields('/proc/self/stat');
  if (self?.[0] !== String(process.pid)) return undefined;
  // Fields 3 onwards start at index 1: field 22 is index 20.
  const stat = fields(`/proc/${pid}/stat`);
  return stat && { state: stat[1], started: stat[20] };
}
