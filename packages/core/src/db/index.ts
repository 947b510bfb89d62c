import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { lockDataDir } from './data-dir-lock';
import { type Migrated, migrate, migratedMessage, newerSchemaMessage } from './migrate';
import { isDatabaseUnavailable, sqlState } from './pg-error';
import { CLUSTER_MARK, readPgliteSeed, unpackPgliteSeed } from './pglite-seed';
import {
  type PostgresTarget,
  postgresPassword,
  postgresTarget,
  readablePostgresUrl,
  targetProblem,
} from './postgres-target';
import { sslModeProblem, tlsRefusalCheck } from './postgres-tls';
import * as schema from './schema';
import { type EndedSession, endStalledSessions, type StalledSightings } from './stalled-sessions';
import type { Db } from './types';

export * from './data-dir-lock';
export * from './maintenance';
export { migrate, migrationsFolder, rowsOf } from './migrate';
export { isDatabaseUnavailable } from './pg-error';
export { pgliteSeedFile, readPgliteSeed, unpackPgliteSeed, writePgliteSeed } from './pglite-seed';
export { type PostgresTarget, postgresPassword, postgresTarget } from './postgres-target';
export * as schema from './schema';
export { type EndedSession, STALLED_SESSION_SWEEP_MS } from './stalled-sessions';
export type { Db, Executor, Schema, Tx } from './types';

export type Notification = (payload: string) => void;

/** An open database of either engine, with the few engine-specific needs behind one face. */
export interface Database {
  readonly db: Db;
  readonly engine: 'postgres' | 'pglite';
  /**
   * LISTEN on a channel; NOTIFY is sent with `pg_notify` inside the writing transaction. On
   * PostgreSQL the listening connection is re-established whenever it drops (a restart, a network
   * cut), retrying until the server is back; `onReconnect` is then called, since notices sent
   * in between are lost.
   */
  listen(channel: string, onPayload: Notification, onReconnect?: () => void): Promise<() => Promise<void>>;
  /**
   * PostgreSQL only: ends the sessions, of any node, stalled in the middle of a statement for
   * longer than the idle-in-transaction timeout (core's `endStalledSessions`), on a connection of
   * its own. Every node calls it every STALLED_SESSION_SWEEP_MS. Absent on PGlite (one process).
   */
  endStalledSessions?: () => Promise<EndedSession[]>;
  /**
   * Ends the pools: their statements may finish for up to 5 s (PostgreSQL); with `now`, they are
   * cut at once (a start's attempt that got no answer, whose statement would wait on).
   */
  close(options?: { now?: boolean }): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** `postgres://…`, `memory://`, or undefined for PGlite under `dataDir`. */
  url?: string | undefined;
  dataDir?: string | undefined;
  /** Pool size for PostgreSQL. */
  maxConnections?: number | undefined;
  /** A PGlite data directory dump to start from (tests clone one migrated instance). */
  loadDataDir?: Blob | File | undefined;
  /** Run migrations (default true). */
  migrate?: boolean | undefined;
  /** Told when an existing data directory open to other users was made private (the server logs it). */
  onDataDirTightened?: ((message: string) => void) | undefined;
  /**
   * Told when the data directory is a copy of another that a server had locked (taken while it
   * ran, or after it crashed), whose server is gone: it is opened as after a crash (a warning).
   */
  onDataDirCopied?: ((message: string) => void) | undefined;
  /** Told when the start applied migrations: how many (the server logs it, for upgrade audits). */
  onMigrated?: ((message: string) => void) | undefined;
  /** Told when the database has migrations this build does not know (newerSchemaMessage). */
  onNewerSchema?: ((message: string) => void) | undefined;
  /**
   * PostgreSQL: how long to keep trying while the server cannot be reached (refused, unknown or
   * unanswering host, starting up), before giving up with the last error; 0 (the default) tries
   * once. An error of another kind (authentication, a database that does not exist) fails at once.
   */
  waitForServerMs?: number | undefined;
  /** PostgreSQL: IDLE_IN_TRANSACTION_TIMEOUT_MS, but for tests. */
  idleInTransactionTimeoutMs?: number | undefined;
  /** Told of each attempt that found PostgreSQL unreachable, in a line without the password. */
  onUnreachable?: ((message: string) => void) | undefined;
  /** PostgreSQL: FIRST_ANSWER_MS, but for tests. */
  firstAnswerMs?: number | undefined;
}

/** PostgreSQL's schemes, in any case (URL schemes are case-insensitive: `POSTGRES://` is one). */
const POSTGRES_URL = /^postgres(ql)?:\/\//i;

/** `memory://`, in any case: an in-memory PGlite (tests, throwaway servers). */
export const isMemoryUrl = (url: string | undefined): boolean =>
  url !== undefined && /^memory:\/\/$/i.test(url);

/**
 * Why a database URL cannot be opened, or undefined when it can: PostgreSQL's own schemes,
 * `memory://`, or empty (the embedded database). Anything else used to open the embedded
 * database without a word, as if it had been left empty. Only the scheme is quoted (a URL may
 * hold a password).
 */
export function databaseUrlProblem(url: string | undefined): string | undefined {
  if (!url || isMemoryUrl(url)) return undefined;
  if (POSTGRES_URL.test(url)) return unreadablePostgresUrl(url);
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0];
  return `must be a PostgreSQL URL (postgres://… or postgresql://…), memory://, or empty for the embedded database${scheme ? `, not a ${scheme} URL` : `; this one has no scheme`}`;
}

/**
 * Why postgres.js cannot read a PostgreSQL URL, read as it reads one (its hosts, several
 * comma-separated allowed, decoded; then the URL with the first; then user name and password
 * decoded), or undefined. Its own errors, `Invalid URL` and `URI malformed`, named nothing.
 */
function unreadablePostgresUrl(url: string): string | undefined {
  try {
    const target = postgresTarget(url);
    const parsed = readablePostgresUrl(target.url);
    decodeURIComponent(parsed.username);
    decodeURIComponent(parsed.password);
    return targetProblem(target) ?? sslModeProblem(target);
  } catch {
    return (
      'is not a URL that can be read: check its host and port, and write a %, @, /, : or # in the ' +
      'user name or password as %25, %40, %2F, %3A or %23'
    );
  }
}

export async function openDatabase(options: OpenDatabaseOptions = {}): Promise<Database> {
  const url = options.url;
  const problem = databaseUrlProblem(url);
  if (problem) throw new Error(`the database URL ${problem}`);
  if (url && POSTGRES_URL.test(url)) return openPostgresWhenReachable(url, options);
  const database = await openPglite(
    isMemoryUrl(url) ? undefined : (options.dataDir ?? './.data'),
    options.loadDataDir,
    options.onDataDirTightened,
    options.onDataDirCopied,
  );
  if (options.migrate !== false) tellMigrated(await migrate(database.db), options);
  return database;
}

/**
 * Tells `onMigrated` what a start's migration run applied, when it applied any, and
 * `onNewerSchema` of migrations a newer release applied.
 */
function tellMigrated(
  migrated: Migrated,
  { onMigrated, onNewerSchema }: Pick<OpenDatabaseOptions, 'onMigrated' | 'onNewerSchema'>,
): void {
  const message = migratedMessage(migrated);
  if (message !== undefined) onMigrated?.(message);
  const newer = newerSchemaMessage(migrated);
  if (newer !== undefined) onNewerSchema?.(newer);
}

/** Pause before attempt n + 1 to reach PostgreSQL at start: 0.25 s, doubling, at most 5 s. */
const startRetryPause = (attempt: number): number => Math.min(250 * 2 ** (attempt - 1), 5000);

/**
 * PostgreSQL, migrated; while it cannot be reached, tried again until `waitForServerMs` has
 * passed. A server started with its database (compose, systemd) used to exit 2 s in, when the
 * database was still starting. One that answers it has no TLS, which the SSL mode requires, is
 * not waited for: it fails at once, saying so.
 */
async function openPostgresWhenReachable(given: string, options: OpenDatabaseOptions): Promise<Database> {
  const deadline = Date.now() + (options.waitForServerMs ?? 0);
  const target = postgresTarget(given);
  const { url } = target;
  const tlsRefusal = tlsRefusalCheck(target);
  for (let attempt = 1; ; attempt++) {
    const database = openPostgres(
      target,
      options.maxConnections ?? 10,
      options.idleInTransactionTimeoutMs ?? IDLE_IN_TRANSACTION_TIMEOUT_MS,
    );
    try {
      // The first statement connects (the pools connect lazily).
      if (options.migrate !== false) {
        await firstAnswer(database.db, options.firstAnswerMs ?? FIRST_ANSWER_MS);
        tellMigrated(await migrate(database.db), options);
      }
      return database;
    } catch (error) {
      await database.close({ now: true }).catch(() => {});
      if (!isDatabaseUnavailable(error)) throw refusedStatement(error, url);
      // The server hung up on the TLS handshake, as a server going away would: asked apart.
      const refusal = await tlsRefusal?.();
      if (refusal) throw new Error(refusal, { cause: error });
      const left = deadline - Date.now();
      if (left <= 0) throw error;
      const pause = Math.min(startRetryPause(attempt), left);
      options.onUnreachable?.(
        `PostgreSQL cannot be reached (${withoutPassword(describeError(error), url)}): attempt ${attempt}, ` +
          `trying again in ${(pause / 1000).toFixed(pause < 1000 ? 2 : 0)} s, for ${Math.ceil(left / 1000)} s more`,
      );
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/** How long the start waits for the first answer of a PostgreSQL it could connect to. */
const FIRST_ANSWER_MS = 10_000;

/**
 * The first answer of the server, within `ms`, else an error that is an unreachable server's
 * (CONNECT_TIMEOUT): waited for, then given up. One that takes connections and hangs up before
 * answering (a proxy whose database is away) is connected to again and again by the pool, for
 * ever, and the statement waits on: the start hung without a word, never giving up.
 */
async function firstAnswer(db: Db, ms: number): Promise<void> {
  // The driver's own error (a refused password, say), as the migrations' transaction gives it,
  // not drizzle's wrapper of it.
  const answered = db.execute(sql`select 1`).then(
    () => undefined,
    (error: unknown) => {
      throw isFailedQuery(error) && error.cause ? error.cause : error;
    },
  );
  // Given up on, it fails when the pool is closed: nobody waits for it any more.
  answered.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  const silence = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(
        `no answer within ${ms / 1000} s: it took the connection and said nothing (a proxy whose database is away?)`,
      );
      reject(Object.assign(error, { code: 'CONNECT_TIMEOUT' }));
    }, ms);
  });
  try {
    await Promise.race([answered, silence]);
  } finally {
    clearTimeout(timer);
  }
}

/** drizzle's wrapper of a statement's error, "Failed query: …", the driver's error its cause. */
const isFailedQuery = (error: unknown): error is Error =>
  error instanceof Error && error.message.startsWith('Failed query');

/** An error's message, or its innermost cause's (drizzle wraps the driver's in "Failed query: …"). */
function describeError(error: unknown): string {
  let message = error instanceof Error ? error.message : String(error);
  for (let e: unknown = error; e instanceof Error; e = e.cause) message = e.message || message;
  return message;
}

/**
 * A statement of the start (its migrations) that PostgreSQL refused, in PostgreSQL's own words and
 * SQLSTATE: drizzle's "Failed query: …" quotes the statement and its values whole, which a log
 * never shows (a role without the rights to create tables said nothing else). Any other error
 * (a refused password, say) as it is.
 */
function refusedStatement(error: unknown, url: string): unknown {
  if (!isFailedQuery(error)) return error;
  const state = sqlState(error);
  const rights =
    state === '42501'
      ? ": the nodes' role lacks a right it needs; give it a database it owns (README, PostgreSQL)"
      : '';
  return new Error(
    `PostgreSQL refused a statement of the start's migrations: ${withoutPassword(describeError(error), url)}${state ? ` (SQLSTATE ${state})` : ''}${rights}`,
    { cause: error },
  );
}

/** `text` without the URL's password, should the driver ever quote it. */
function withoutPassword(text: string, url: string): string {
  // Unreadable URLs are refused before any attempt.
  const password = postgresPassword(url);
  if (!password) return text;
  return text
    .replaceAll(password.written, '[redacted]')
    .replaceAll(password.decoded ?? password.written, '[redacted]');
}

/** Connecting gives up after this long (then a request answers 503 and its client retries). */
const CONNECT_TIMEOUT_S = 5;
/** Longest pause between attempts to listen again after the connection dropped. */
const MAX_RELISTEN_PAUSE_MS = 2000;
/**
 * Seconds before a pooled connection that failed is tried again, after `retries` failures in a
 * row across the pool. postgres.js's default grows to 10-20 s after a few seconds of outage, so a
 * node kept every request waiting that long after the database was back; here it stays under 1 s
 * (a connection attempt to a server that is down is refused at once, and costs little).
 */
const reconnectBackoff = (retries: number): number =>
  Math.min(0.05 * 2 ** retries, 1) * (0.5 + Math.random() / 2);

/**
 * Index probes cost what they cost on a cached working set (1.1, as for SSDs), not what they cost
 * reading a spinning disk (PostgreSQL's default 4). With the default, a table of a few hundred
 * rows (a new database: a few pages, no statistics yet) is cheaper to scan whole than to probe,
 * and the generic plan a pool connection keeps is made once, at its first execution: some
 * connections kept sequential scans of the spaces and participants in the sending statement,
 * their versions piling up under thousands of updates a second, while others probed by key
 * (bench, fresh database, same code: 2 runs in 4 at half the req/s at 50 and 200 connections and
 * twice the PostgreSQL CPU per message; with this setting 3 in 3 probed, at the faster rate).
 */
const PLANNER_SETTINGS = { random_page_cost: '1.1' };

/**
 * Connections of their own for the group-committed send (appendMessage), beside the pool: as many
 * as the batches of sends a process keeps in flight. postgres.js gives a query the pool connection
 * that has been idle the longest, so once a burst had opened the whole pool, the batches (one at a
 * time) went round all of its connections, each to the backend whose caches had gone coldest
 * (bench, 16 closed-loop senders, a pool of 10 opened by a burst: 5,800 req/s and 95 µs of
 * PostgreSQL CPU per message; on these connections 7,500 and 75 µs).
 */
export const SENDING_CONNECTIONS = 2;
const sendingDbs = new WeakMap<Db, Db>();

/** Where `db`'s group-committed sends run: its own connections (PostgreSQL), or `db` itself. */
export const sendingDbOf = (db: Db): Db => sendingDbs.get(db) ?? db;

/**
 * Connections of their own for bookkeeping, beside the pool: the rate limiter's counts, presence
 * (`lastSeenAt`) and the slots of open streams. Their commits do not wait for the write-ahead log
 * to reach the disk (`synchronous_commit = off`): what they write is visible to every node at
 * once, and a crash of PostgreSQL (not a restart, which flushes) may forget the last fraction of
 * a second of it (a few counts, a presence, stream slots whose streams the crash ended anyway),
 * never anything a client was told is stored. On a PostgreSQL that syncs its commits, every
 * request paid one flush of the log for its rate-limit count before its own work (bench section
 * `durable`, GET /api/health at 1 connection: p50 1.42 ms beside the bare route's flushed insert
 * at 0.92; after, 0.92 beside 2.81; see docs/decisions.md).
 * Three: the rate limiter keeps two batches in flight, presence one.
 */
export const BOOKKEEPING_CONNECTIONS = 3;
const bookkeepingDbs = new WeakMap<Db, Db>();

/** Where `db`'s bookkeeping runs: its own asynchronously committing connections, or `db` itself. */
export const bookkeepingDbOf = (db: Db): Db => bookkeepingDbs.get(db) ?? db;

/**
 * How long PostgreSQL lets one of the service's sessions sit idle inside a transaction before it
 * ends the session, rolling the transaction back (and how long the nodes let one wait on its node
 * in the middle of a statement, which PostgreSQL does not bound: `endStalledSessions`). No
 * transaction of the service waits on anything but the database (a client, a hash, a host lookup
 * come before or after), so one idle for long belongs to a node that stopped mid-transaction:
 * frozen (SIGSTOP, a paused VM) or cut off behind a network that still answers for it. Its row locks would hold every other node's writes to the
 * same space, and so the sending connections of those nodes, until it came back; it is answered
 * 503 by its own request timer by then (30 s), and whatever it did is rolled back.
 */
export const IDLE_IN_TRANSACTION_TIMEOUT_MS = 15_000;

/** The host and port of a target that its URL does not say (see postgresTarget), as postgres.js options. */
const hostOf = ({ host, port }: PostgresTarget) => ({
  ...(host !== undefined && { host }),
  ...(port !== undefined && { port }),
});

function openPostgres(target: PostgresTarget, max: number, idleInTransactionMs: number): Database {
  const { url } = target;
  // The pool reconnects by itself: a connection that broke is replaced on the next query.
  const options = (size: number, name: string, settings: Record<string, string> = {}) => ({
    ...hostOf(target),
    max: size,
    onnotice: () => {},
    connect_timeout: CONNECT_TIMEOUT_S,
    backoff: reconnectBackoff,
    // Every statement is prepared (by postgres.js, or by name: PreparedStatement) and keeps one
    // generic plan per connection. Left to choose, PostgreSQL re-planned the rate limiter's
    // batched statement on every call (its custom plans, costed for the batch's known array
    // sizes, always looked cheaper): 0.7 ms of planning per request batch, 1.55 ms of PostgreSQL
    // CPU for a batch of one against 0.34 ms with its generic plan.
    connection: {
      application_name: name,
      plan_cache_mode: 'force_generic_plan',
      idle_in_transaction_session_timeout: idleInTransactionMs,
      ...PLANNER_SETTINGS,
      ...settings,
    },
  });
  const client = postgres(url, options(max, 'convene'));
  const sending = postgres(url, options(SENDING_CONNECTIONS, 'convene-send'));
  const bookkeeping = postgres(
    url,
    options(BOOKKEEPING_CONNECTIONS, 'convene-bookkeeping', { synchronous_commit: 'off' }),
  );
  // The stalled-session sweep's own: the pool may be full of requests waiting behind one.
  const watch = postgres(url, options(1, 'convene-watch'));
  const db = drizzlePostgres(client, { schema }) as unknown as Db;
  sendingDbs.set(db, drizzlePostgres(sending, { schema }) as unknown as Db);
  bookkeepingDbs.set(db, drizzlePostgres(bookkeeping, { schema }) as unknown as Db);
  const watchDb = drizzlePostgres(watch, { schema }) as unknown as Db;
  const sightings: StalledSightings = new Map();
  const listeners: (() => Promise<void>)[] = [];
  return {
    db,
    engine: 'postgres',
    async listen(channel, onPayload, onReconnect) {
      const listener = await listenResiliently(target, channel, onPayload, onReconnect);
      listeners.push(listener);
      return listener;
    },
    endStalledSessions: () => endStalledSessions({ db: watchDb, afterMs: idleInTransactionMs, sightings }),
    async close({ now = false } = {}) {
      await Promise.all(listeners.map((stop) => stop()));
      const timeout = now ? 0 : 5;
      await Promise.all([client, sending, bookkeeping, watch].map((pool) => pool.end({ timeout })));
    },
  };
}

/**
 * LISTEN on a connection of its own that comes back after it drops. postgres.js's own
 * `listen` re-listens once when its connection closes and gives up silently if the server is
 * still away, leaving the node deaf for good; here every close schedules attempts until one
 * succeeds.
 */
async function listenResiliently(
  target: PostgresTarget,
  channel: string,
  onPayload: Notification,
  onReconnect: (() => void) | undefined,
): Promise<() => Promise<void>> {
  let stopped = false;
  let retrying: NodeJS.Timeout | undefined;
  const quoted = `"${channel.replace(/"/g, '""')}"`;
  const connection = postgres(target.url, {
    ...hostOf(target),
    max: 1,
    idle_timeout: 0,
    max_lifetime: null,
    fetch_types: false,
    onnotice: () => {},
    connect_timeout: CONNECT_TIMEOUT_S,
    backoff: reconnectBackoff,
    connection: { application_name: 'convene-listen' },
    onclose: () => {
      if (!stopped) relisten(100);
    },
    // Untyped, but what postgres.js's own listen() passes: every NotificationResponse.
    ...({
      onnotify: (name: string, payload: string) => {
        if (name === channel) onPayload(payload);
      },
    } as object),
  });
  const relisten = (pauseMs: number) => {
    if (stopped || retrying) return;
    retrying = setTimeout(() => {
      retrying = undefined;
      connection.unsafe(`listen ${quoted}`).then(
        () => onReconnect?.(),
        () => relisten(Math.min(pauseMs * 2, MAX_RELISTEN_PAUSE_MS)),
      );
    }, pauseMs);
    retrying.unref();
  };
  await connection.unsafe(`listen ${quoted}`);
  return async () => {
    stopped = true;
    clearTimeout(retrying);
    await connection.end({ timeout: 2 });
  };
}

async function openPglite(
  dataDir: string | undefined,
  loadDataDir: Blob | File | undefined,
  onDataDirTightened: ((message: string) => void) | undefined,
  onDataDirCopied: ((message: string) => void) | undefined,
): Promise<Database> {
  const unlock = dataDir ? lockDataDir(dataDir, onDataDirTightened, onDataDirCopied) : () => {};
  try {
    // A new cluster (in memory, or a data directory without one) starts from the build's migrated
    // snapshot, when there is one, instead of running initdb (see pglite-seed.ts): written into a
    // new data directory before PGlite opens it, given to PGlite to load into memory.
    const isNew = !dataDir || !existsSync(join(dataDir, CLUSTER_MARK));
    const unpacked = isNew && dataDir !== undefined && !loadDataDir && unpackPgliteSeed(dataDir);
    const from = loadDataDir ?? (isNew && !unpacked ? readPgliteSeed() : undefined);
    const client = new PGlite({
      ...(dataDir ? { dataDir } : {}),
      ...(from ? { loadDataDir: from } : {}),
    });
    await client.waitReady;
    // Its one session plans as the pool's do (see PLANNER_SETTINGS).
    for (const [name, value] of Object.entries(PLANNER_SETTINGS)) await client.exec(`set ${name} = ${value}`);
    const db = drizzlePglite(client, { schema }) as unknown as Db;
    return {
      db,
      engine: 'pglite',
      // One process, no connection to lose: nothing to re-establish.
      async listen(channel, onPayload) {
        const unlisten = await client.listen(channel, onPayload);
        return () => unlisten();
      },
      async close() {
        await client.close();
        unlock();
      },
    };
  } catch (error) {
    unlock();
    throw error;
  }
}
