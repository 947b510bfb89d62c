import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DataDirInUseError, DataDirUnusableError, lockDataDir } from '../src/db';
import { makeDirectories } from '../src/fs/make-directories';

// The lock of an embedded database's directory: who holds it, and when a lock is left over.
describe('data directory lock', () => {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'convene-lock-'));
    dirs.push(dir);
    return dir;
  };
  /** A live process that is no Convene server: what a reused pid names. */
  const unrelated = () => {
    const child = spawn('sleep', ['60'], { stdio: 'ignore' });
    children.push(child);
    return child.pid!;
  };
  const lockOf = (dir: string) => readFileSync(join(dir, 'convene.lock'), 'utf8');
  const hasProc = existsSync('/proc/self/stat');

  it('makes a directory and its missing parents (their mode given), and refuses at once where one cannot be made', () => {
    const root = tempDir();
    makeDirectories(join(root, 'a/b/c'), 0o700);
    expect(statSync(join(root, 'a/b/c')).isDirectory()).toBe(true);
    expect(statSync(join(root, 'a')).mode & 0o777).toBe(0o700 & ~process.umask());
    makeDirectories(join(root, 'a/b/c'), 0o700);
    writeFileSync(join(root, 'file'), 'x');
    expect(() => makeDirectories(join(root, 'file'), 0o700)).toThrow(/EEXIST/);
    expect(() => makeDirectories(join(root, 'file/under'), 0o700)).toThrow(/ENOTDIR/);
    // Where Node's own recursive mkdir never returns (ENOENT from a directory that exists).
    if (existsSync('/proc/self')) expect(() => makeDirectories('/proc/nope/deeper', 0o700)).toThrow(/ENOENT/);
  });

  it('says a data directory that cannot be made or is a file, naming DATA_DIR', () => {
    const file = join(tempDir(), 'file');
    writeFileSync(file, 'x');
    expect(() => lockDataDir(file)).toThrow(DataDirUnusableError);
    expect(() => lockDataDir(file)).toThrow(
      `data directory ${file} cannot be used (a file is in the way of it): set DATA_DIR (--data-dir) to a directory this user may create or write`,
    );
    if (existsSync('/proc/self'))
      expect(() => lockDataDir('/proc/nope')).toThrow(
        /^data directory \/proc\/nope cannot be used \(ENOENT: /,
      );
  });

  it('refuses while this process holds it, and is free again once released', () => {
    const dir = tempDir();
    const unlock = lockDataDir(dir);
    expect(() => lockDataDir(dir)).toThrow(DataDirInUseError);
    unlock();
    expect(existsSync(join(dir, 'convene.lock'))).toBe(false);
    lockDataDir(dir)();
  });

  it("takes over a lock naming this process's pid left by an earlier process (a container's pid 1 after kill -9)", () => {
    const dir = tempDir();
    // What a server that was pid 1 before this one (also pid 1) left: the new format, and the old.
    lockDataDir(dir);
    const earlier = JSON.parse(lockOf(dir));
    for (const left of [
      JSON.stringify({ ...earlier, instance: 'an-earlier-process' }),
      String(process.pid),
    ]) {
      writeFileSync(join(dir, 'convene.lock'), left);
      const unlock = lockDataDir(dir);
      expect(JSON.parse(lockOf(dir)).instance).toBe(earlier.instance);
      unlock();
    }
  });

  it.runIf(hasProc)('takes over a lock whose pid now names another live process (pid reused)', () => {
    const dir = tempDir();
    // A crashed server's lock (never released), whose pid the system then gave to another process.
    lockDataDir(dir);
    const other = unrelated();
    writeFileSync(join(dir, 'convene.lock'), lockOf(dir).replace(String(process.pid), String(other)));
    const unlock = lockDataDir(dir);
    expect(JSON.parse(lockOf(dir)).pid).toBe(process.pid);
    unlock();
  });

  it.runIf(hasProc)(
    'takes over a lock whose server was killed a moment ago and is not yet reaped (a zombie)',
    async () => {
      const dir = tempDir();
      // A child whose parent never waits for it: once it exits, it stays a zombie while `sleep` runs.
      const parent = spawn('sh', ['-c', 'sleep 0.1 & echo $!; exec sleep 60'], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      children.push(parent);
      const [line] = (await once(parent.stdout!, 'data')) as [Buffer];
      const zombie = Number(line.toString().trim());
      const stat = () => readFileSync(`/proc/${zombie}/stat`, 'utf8');
      await expect
        .poll(
          () =>
            stat()
              .slice(stat().lastIndexOf(')') + 2)
              .split(' ')[0],
          { timeout: 5000 },
        )
        .toBe('Z');
      // The lock it recorded while it ran: its pid, boot and start time all still match.
      const started = stat()
        .slice(stat().lastIndexOf(')') + 2)
        .split(' ')[19];
      const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      writeFileSync(
        join(dir, 'convene.lock'),
        JSON.stringify({ pid: zombie, instance: 'killed', boot, started }),
      );
      const unlock = lockDataDir(dir);
      expect(JSON.parse(lockOf(dir)).pid).toBe(process.pid);
      unlock();
    },
  );

  it.runIf(hasProc)(
    'refuses a lock whose live pid started when the recorded one did; takes over one of another boot',
    async () => {
      const dir = tempDir();
      const other = unrelated();
      // Its start time, as that server would have recorded it.
      await expect.poll(() => existsSync(`/proc/${other}/stat`)).toBe(true);
      const stat = readFileSync(`/proc/${other}/stat`, 'utf8');
      const started = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
      const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      const owner = { pid: other, instance: 'a-running-server', boot, started };
      writeFileSync(join(dir, 'convene.lock'), JSON.stringify(owner));
      expect(() => lockDataDir(dir)).toThrow(`is in use by another Convene server (pid ${other})`);
      // What to do, in the flags `convene serve` takes as well as the variables.
      expect(() => lockDataDir(dir)).toThrow(
        'stop it, or start this one on another data directory (--data-dir, DATA_DIR) or on PostgreSQL (--database-url, DATABASE_URL)',
      );

      writeFileSync(join(dir, 'convene.lock'), JSON.stringify({ ...owner, boot: 'before-the-last-reboot' }));
      lockDataDir(dir)();
    },
  );

  it.runIf(hasProc)(
    'says of a copy taken while its server runs that it is a copy, what it risks and what to do, not that it is in use',
    () => {
      const original = tempDir();
      const unlock = lockDataDir(original);
      const copy = join(tempDir(), 'copy');
      cpSync(original, copy, { recursive: true });
      let refusal: unknown;
      try {
        lockDataDir(copy);
      } catch (error) {
        refusal = error;
      }
      expect(refusal).toBeInstanceOf(DataDirInUseError);
      const message = (refusal as Error).message;
      expect(message).toBe(
        `data directory ${copy} was copied from ${original} while the Convene server there (pid ${process.pid}) ` +
          `was running: no server uses this copy, but its files may be inconsistent (its lock file, ` +
          `${join(copy, 'convene.lock')}, came with it). Stop that server, then copy ${original} again. To start ` +
          'on this copy as it is, delete its convene.lock: it is then opened as after a crash, and what was ' +
          'being written while it was copied may be missing or damaged',
      );
      expect(message).not.toMatch(/in use/);
      // The original is in use, and said so, as before.
      expect(() => lockDataDir(original)).toThrow(
        `data directory ${original} is in use by another Convene server`,
      );
      // The same directory through a symbolic link is no copy.
      const link = join(tempDir(), 'link');
      symlinkSync(original, link);
      expect(() => lockDataDir(link)).toThrow(/is in use by another Convene server/);
      unlock();
    },
  );

  it('opens a copy whose server has gone, saying it was copied from a running (or crashed) server', () => {
    const original = tempDir();
    lockDataDir(original);
    const copy = join(tempDir(), 'copy');
    cpSync(original, copy, { recursive: true });
    // The server the copy's lock names has since gone (another pid, no longer running).
    const gone = { ...JSON.parse(lockOf(copy)), pid: 2 ** 22 + 1, instance: 'gone' };
    writeFileSync(join(copy, 'convene.lock'), JSON.stringify(gone));
    const told: string[] = [];
    const unlock = lockDataDir(copy, undefined, (message) => told.push(message));
    expect(told).toEqual([
      `data directory ${copy} was copied from ${original} while a Convene server ran there, or after one ` +
        'stopped there without closing (a crash): it is opened as after a crash, and what was being written ' +
        'while it was copied may be missing or damaged. Take copies with the server stopped',
    ]);
    expect(JSON.parse(lockOf(copy)).dir).toBe(copy);
    unlock();
    // Its own lock, left by a crash of its own, says nothing.
    lockDataDir(copy);
    const silent: string[] = [];
    writeFileSync(
      join(copy, 'convene.lock'),
      JSON.stringify({ ...JSON.parse(lockOf(copy)), instance: 'gone' }),
    );
    lockDataDir(copy, undefined, (message) => silent.push(message))();
    expect(silent).toEqual([]);
  });

  it('refuses a lock of the old format (a bare pid) naming another live process: nothing tells it from its owner', () => {
    const dir = tempDir();
    const other = unrelated();
    writeFileSync(join(dir, 'convene.lock'), String(other));
    expect(() => lockDataDir(dir)).toThrow(DataDirInUseError);
  });
});
