import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
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

const ZStoreFile = z.object({
  version: z.literal(1),
  /** The server used when neither --url nor CONVENE_URL says (set by `login --url`, and by `join`: the server it joined at). */
  url: z.optional(z.string()),
  hosts: z._default(z.record(z.string(), ZHost), {}),
});
export type StoreFile = z.infer<typeof ZStoreFile>;

const emptyHost = (): HostEntry => ({ spaces: {} });

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
    const result = ZStoreFile.safeParse(parsed);
    if (!result.success) {
      // Never overwrite a file we cannot read: it may hold the only copy of a space key.
      throw new CliError(`${this.file} is not a credentials file convene can read`, {
        hint: `Move it aside (it may hold space keys you want to keep), then run the command again.`,
      });
    }
    return result.data;
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

  /** Changes the file under the lock: `change` edits the file's object in place. */
  update<T>(change: (file: StoreFile) => T): T {
    this.ensureDir();
    return this.withLock(() => {
      // Never the empty stand-in of an unreadable file: that would overwrite it.
      const file = this.readFile();
      const result = change(file);
      const temporary = `${this.file}.${process.pid}.tmp`;
      writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
      renameSync(temporary, this.file);
      return result;
    });
  }

  /** Edits one server's entry, creating it when needed. */
  updateHost<T>(url: string, change: (host: HostEntry) => T): T {
    return this.update((file) => {
      const key = hostKey(url);
      file.hosts[key] ??= emptyHost();
      return change(file.hosts[key]);
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
    if (!existsSync(this.dir)) mkdirSync(this.dir, { recursive: true, mode: 0o700 });
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
