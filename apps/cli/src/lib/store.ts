import {
  chmodSync,
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import envPaths from 'env-paths';
// zod/mini, bundled into convene's own file: the credential file is read by every command, and
// zod's full build is about 100 files to load (a third of a command's start).
import * as z from 'zod/mini';
import { CliError } from './errors';
import { makeDirectories } from './make-directories';
import { shellWord } from './quote';

/**
 * Where `convene` keeps what it knows (decisions.md, "The SDK and the CLI"):
 * `$XDG_CONFIG_HOME/convene/`, else `~/.config/convene/` (also on macOS, as gh does), files 0600.
 */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'convene');
  if (process.platform === 'win32') return envPaths('convene', { suffix: '' }).config;
  return join(homedir(), '.config', 'convene');
}

/** Where texts of interrupted edits are kept (`$XDG_DATA_HOME/convene/recovered`). */
export function recoveryDir(): string {
  return join(envPaths('convene', { suffix: '' }).data, 'recovered');
}

const ZStoredSpace = z.object({
  spaceId: z.string(),
  name: z.string(),
  role: z.enum(['owner', 'participant']),
  /** The space key (owner or participant), sent as X-Private-Key. */
  key: z.string(),
  participantId: z.string(),
  savedAt: z.string(),
});
export type StoredSpace = z.infer<typeof ZStoredSpace>;

const ZSession = z.object({
  /** The dashboard JWT of `convene login --password`. */
  token: z.string(),
  expiresAt: z.string(),
  user: z.object({ id: z.string(), email: z.string(), name: z.string() }),
});
export type StoredSession = z.infer<typeof ZSession>;

const ZPendingJoin = z.object({
  spaceId: z.string(),
  invitationKey: z.string(),
  participantId: z.string(),
  pollToken: z.optional(z.string()),
  name: z.string(),
});
export type StoredPendingJoin = z.infer<typeof ZPendingJoin>;

const ZHost = z.object({
  /** The `usr_` token of `convene login`: links spaces created or joined to the human's dashboard. */
  userToken: z.optional(z.string()),
  /**
   * Whether convene obtained `userToken` itself (the browser link, or minted by `login --password`),
   * so `logout` revokes it; a token given with `--with-token` may be in use elsewhere and is kept.
   */
  userTokenMinted: z.optional(z.boolean()),
  session: z.optional(ZSession),
  /** The space commands use when none is named: the last created or joined, or `space use`. */
  defaultSpace: z.optional(z.string()),
  spaces: z._default(z.record(z.string(), ZStoredSpace), {}),
  /** Joins still waiting for approval when `join` stopped: the next `join` resumes them. */
  pendingJoins: z.optional(z.record(z.string(), ZPendingJoin)),
});
export type HostEntry = z.infer<typeof ZHost>;

/**
 * An entry of the file convene could not read (one written by hand, or by a convene before
 * 0.1.1 from a server that was not Convene), moved aside as it was: where it stood (`at`, as
 * `hosts["http://…"].spaces["…"]`) and its value, for whoever repairs it.
 */
const ZSetAside = z.object({ at: z.string(), value: z.unknown(), setAsideAt: z.string() });
export type SetAside = z.infer<typeof ZSetAside>;

const ZStoreFile = z.object({
  version: z.literal(1),
  /** The server used when neither --url nor CONVENE_URL says (set by `join`: the server it joined at). */
  url: z.optional(z.string()),
  hosts: z._default(z.record(z.string(), ZHost), {}),
  /** Entries convene could not read, kept here verbatim by the first change saved after finding them. */
  unreadable: z.optional(z.array(ZSetAside)),
});
export type StoreFile = z.infer<typeof ZStoreFile>;

const emptyHost = (): HostEntry => ({ spaces: {} });

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A host's fields beside its spaces and pending joins, each read on its own. */
const HOST_FIELDS = {
  userToken: z.string(),
  userTokenMinted: z.boolean(),
  session: ZSession,
  defaultSpace: z.string(),
} as const;

/**
 * The file as far as it can be read: every entry (a space's key, a pending join, a host's token,
 * session or default space, a host's whole entry when it is no object) that is not what convene
 * writes is left out, and listed in `skipped` with where it stood. Undefined for what is no
 * credentials file of this version at all (not JSON, another `version`, `hosts` no object).
 */
export function salvage(
  parsed: unknown,
): { file: StoreFile; skipped: Omit<SetAside, 'setAsideAt'>[] } | undefined {
  if (!isRecord(parsed) || parsed.version !== 1) return undefined;
  const { hosts = {}, url, unreadable } = parsed;
  if (!isRecord(hosts)) return undefined;
  const skipped: Omit<SetAside, 'setAsideAt'>[] = [];
  const file: StoreFile = { version: 1, hosts: {} };
  if (url !== undefined) {
    if (typeof url === 'string') file.url = url;
    else skipped.push({ at: 'url', value: url });
  }
  if (unreadable !== undefined) {
    const kept = z.array(ZSetAside).safeParse(unreadable);
    if (!kept.success) return undefined;
    file.unreadable = kept.data;
  }
  for (const [key, raw] of Object.entries(hosts)) {
    const at = `hosts[${JSON.stringify(key)}]`;
    if (!isRecord(raw)) {
      skipped.push({ at, value: raw });
      continue;
    }
    const host: HostEntry = emptyHost();
    for (const [field, schema] of Object.entries(HOST_FIELDS)) {
      if (raw[field] === undefined) continue;
      const read = schema.safeParse(raw[field]);
      if (read.success) Object.assign(host, { [field]: read.data });
      else skipped.push({ at: `${at}.${field}`, value: raw[field] });
    }
    const entries = <T>(field: string, schema: z.ZodMiniType<T>) => {
      const group = raw[field];
      if (group === undefined) return undefined;
      if (!isRecord(group)) {
        skipped.push({ at: `${at}.${field}`, value: group });
        return undefined;
      }
      const kept: Record<string, T> = {};
      for (const [id, entry] of Object.entries(group)) {
        const read = schema.safeParse(entry);
        if (read.success) kept[id] = read.data;
        else skipped.push({ at: `${at}.${field}[${JSON.stringify(id)}]`, value: entry });
      }
      return kept;
    };
    host.spaces = entries('spaces', ZStoredSpace) ?? {};
    const pending = entries('pendingJoins', ZPendingJoin);
    if (pending) host.pendingJoins = pending;
    file.hosts[key] = host;
  }
  return { file, skipped };
}

/** One key per server: scheme, host, port and any base path, without a trailing slash. */
export function hostKey(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`.replace(/\/+$/, '');
}

/**
 * The credential file (`credentials.json`, 0600 in a 0700 directory). Every change is a
 * read-modify-write under a lock file and lands with an atomic rename, so two terminals saving
 * keys at once never lose one.
 */
export class CredentialStore {
  readonly dir: string;
  readonly file: string;
  /** Set by `doctor` once it has reported the file unreadable: reads then see an empty file. */
  private unreadableAsEmpty = false;
  /**
   * Told, once, when the file is found readable by other users (it holds keys), as ssh and gh
   * warn; unset by `doctor`, whose own check reports it.
   */
  warnIfOpen: ((text: string) => void) | undefined;
  private openChecked = false;
  /**
   * Told, once, of entries the file holds that convene cannot read (see salvage): the rest is
   * used, and they are moved aside by the next change saved; unset by `doctor`, which reports them.
   */
  warnIfSetAside: ((text: string) => void) | undefined;
  private setAsideWarned = false;
  /** The entries the last read left out: the next change saved moves them under `unreadable`. */
  private skipped: Omit<SetAside, 'setAsideAt'>[] = [];

  constructor(dir: string = configDir()) {
    this.dir = dir;
    this.file = join(dir, 'credentials.json');
  }

  read(): StoreFile {
    try {
      return this.readFile();
    } catch (error) {
      if (this.unreadableAsEmpty && error instanceof CliError) return { version: 1, hosts: {} };
      throw error;
    }
  }

  /**
   * Why the file cannot be read, if it cannot; from then on reads see an empty file (writes still
   * refuse to replace it), so `doctor` can go on with the checks that do not need it.
   */
  readProblem(): CliError | undefined {
    try {
      this.readFile();
      return undefined;
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      this.unreadableAsEmpty = true;
      return error;
    }
  }

  private readFile(): StoreFile {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, hosts: {} };
      throw new CliError(`cannot read ${this.file}: ${(error as Error).message}`, {
        hint: 'Check the permissions of the file and its directory.',
      });
    }
    this.checkOpen();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const result = salvage(parsed);
    if (!result) {
      // Never overwrite a file we cannot read: it may hold the only copy of a space key.
      throw new CliError(`${this.file} is not a credentials file convene can read`, {
        hint: `Move it aside (it may hold space keys you want to keep), then run the command again.`,
      });
    }
    // One entry convene cannot read (a hand edit gone wrong) does not take every key with it.
    this.skipped = result.skipped;
    if (this.skipped.length && !this.setAsideWarned) {
      this.setAsideWarned = true;
      const n = this.skipped.length;
      this.warnIfSetAside?.(
        `${this.file} holds ${n === 1 ? 'an entry' : `${n} entries`} convene cannot read, left out: ${this.skipped
          .map((s) => s.at)
          .join(
            ', ',
          )}. The next change saved keeps ${n === 1 ? 'it' : 'them'}, as ${n === 1 ? 'it is' : 'they are'}, under "unreadable" in the file; \`convene doctor\` lists them.`,
      );
    }
    return result.file;
  }

  /**
   * The entries convene cannot read: those in place (left out of every read) and those moved
   * under `unreadable` already; for `doctor`.
   */
  setAside(): { at: string; moved: boolean }[] {
    const file = this.readFile();
    return [
      ...this.skipped.map(({ at }) => ({ at, moved: false })),
      ...(file.unreadable ?? []).map(({ at }) => ({ at, moved: true })),
    ];
  }

  private checkOpen(): void {
    if (this.openChecked || process.platform === 'win32') return;
    this.openChecked = true;
    const mode = statSync(this.file).mode & 0o777;
    if (mode & 0o077) {
      this.warnIfOpen?.(
        `${this.file} is readable by other users (mode ${mode.toString(8)}), and it holds your keys: chmod 600 ${shellWord(this.file)}`,
      );
    }
  }

  host(url: string): HostEntry {
    return this.read().hosts[hostKey(url)] ?? emptyHost();
  }

  /**
   * Changes the file under the lock: `change` edits the file's object in place. A file system
   * that refuses the write (full, read-only, not ours) is a CliError saying so, never taken for a
   * bug of convene, and leaves neither its temporary file nor the lock behind.
   */
  update<T>(change: (file: StoreFile) => T): T {
    try {
      return this.updateLocked(change);
    } catch (error) {
      throw isFileSystemError(error) ? this.cannotSave(error) : error;
    }
  }

  private cannotSave(error: NodeJS.ErrnoException): CliError {
    const full = error.code === 'ENOSPC' || error.code === 'EDQUOT';
    return new CliError(`could not save ${this.file}: ${error.message}`, {
      hint: full
        ? 'The disk is full: free some space, then run the command again.'
        : `convene cannot write in ${this.dir}: check who owns it and its permissions, or have convene keep its files elsewhere with XDG_CONFIG_HOME.`,
      cause: error,
    });
  }

  private updateLocked<T>(change: (file: StoreFile) => T): T {
    this.ensureDir();
    return this.withLock(() => {
      // Never the empty stand-in of an unreadable file: that would overwrite it.
      const file = this.readFile();
      const result = change(file);
      if (this.skipped.length) {
        const now = new Date().toISOString();
        file.unreadable = [
          ...(file.unreadable ?? []),
          ...this.skipped.map((s) => ({ ...s, setAsideAt: now })),
        ];
      }
      // Never write what the reader would leave out: every entry written is one it reads back.
      const check = salvage(JSON.parse(JSON.stringify(file)));
      if (!check || check.skipped.length) {
        throw new CliError(`convene did not save: ${this.file} would have held an entry it cannot read`, {
          hint: `${check?.skipped.map((s) => s.at).join(', ') ?? 'the file'}: this looks like a bug in convene; please report it with the command you ran.`,
        });
      }
      const temporary = `${this.file}.${process.pid}.tmp`;
      try {
        writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
        renameSync(temporary, this.file);
      } catch (error) {
        try {
          rmSync(temporary, { force: true });
        } catch {
          // The write's own error says what went wrong.
        }
        throw error;
      }
      this.skipped = [];
      return result;
    });
  }

  /** Edits one server's entry, creating it when needed. */
  updateHost<T>(url: string, change: (host: HostEntry, file: StoreFile) => T): T {
    return this.update((file) => {
      const key = hostKey(url);
      file.hosts[key] ??= emptyHost();
      return change(file.hosts[key], file);
    });
  }

  /** Files or a directory readable by others: what `doctor` reports. */
  permissionProblems(): string[] {
    if (process.platform === 'win32') return [];
    const problems: string[] = [];
    for (const [path, wanted] of [
      [this.dir, 0o700],
      [this.file, 0o600],
    ] as const) {
      if (!existsSync(path)) continue;
      const mode = statSync(path).mode & 0o777;
      if (mode & 0o077) problems.push(`${path} is mode ${mode.toString(8)}, expected ${wanted.toString(8)}`);
    }
    return problems;
  }

  /**
   * The directory, created 0700; one found readable by others (made by hand, or by a umask before
   * convene created it) is closed to them before a key is written into it, as the file is.
   */
  private ensureDir(): void {
    // Not Node's recursive mkdir: it never ends on a directory that cannot be made (/proc/x).
    if (!existsSync(this.dir)) makeDirectories(this.dir, 0o700);
    // mkdir's mode is filtered by the umask; the directory must not be readable by others.
    if (process.platform !== 'win32' && statSync(this.dir).mode & 0o077) chmodSync(this.dir, 0o700);
  }

  private withLock<T>(body: () => T): T {
    const lock = `${this.file}.lock`;
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        closeSync(openSync(lock, 'wx', 0o600));
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        // A lock left by a process that died mid-write is old: take it over.
        if (isStale(lock)) rmSync(lock, { force: true });
        else if (Date.now() > deadline) {
          throw new CliError(`${lock} has been held for 10 s`, {
            hint: 'Another convene is saving credentials; if none is running, delete the lock file.',
          });
        } else sleepSync(20);
      }
    }
    try {
      return body();
    } finally {
      rmSync(lock, { force: true });
    }
  }
}

/** An error of a file system call (ENOSPC, EACCES, EROFS, EISDIR…): Node's, with its syscall. */
function isFileSystemError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).syscall === 'string';
}

function isStale(lock: string): boolean {
  try {
    return Date.now() - statSync(lock).mtimeMs > 10_000;
  } catch {
    return false;
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
