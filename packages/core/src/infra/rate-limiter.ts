import { eq, inArray, lt, type SQL, sql } from 'drizzle-orm';
import { liveCredentialSql, type StoredCredentialKind } from '../auth/live-credential';
import { bookkeepingDbOf } from '../db';
import { Batcher } from '../db/batcher';
import { rowsOf } from '../db/migrate';
import { PreparedStatement } from '../db/prepared';
import { rateLimits } from '../db/schema/infra';
import type { Db } from '../db/types';

/** What one counted request learns about its client's current window. */
export interface RateLimitDecision {
  /** Whether this request is within the limit. */
  allowed: boolean;
  limit: number;
  /** Requests left in the window after this one (never below 0). */
  remaining: number;
  /** When the client's current window ends and its count starts again. */
  resetAt: Date;
  /** The bucket counted, when the client was given as a RateLimitClient. */
  bucket?: string;
}

/**
 * A request's client before its credential is checked. The credential counts as the client only
 * if it works: an unknown, malformed or revoked one counts against the address, so inventing
 * credentials never buys fresh buckets.
 */
export interface RateLimitClient {
  /** The bucket of the remote address. */
  address: string;
  credential?:
    | {
        /** Checked here: looked up by the SHA-256 it is stored under. */
        kind: StoredCredentialKind;
        lookup: string;
        bucket: string;
      }
    | {
        /** Checked by the caller already (a signed token). */
        kind: 'verified';
        bucket: string;
      };
}

/** A bucket as given (already resolved), or a client whose credential is still to be checked. */
export type RateLimitSubject = string | RateLimitClient;

export interface RateLimitOptions {
  /** Requests allowed per window. */
  max: number;
  windowSeconds: number;
}

/**
 * Fixed-window request counting per client. A window opens at a client's first request and lasts
 * `windowSeconds`; the first request after it opens the next one. Time comes from the caller
 * (the injected clock), so windows are tested without sleeping.
 */
export interface RateLimiter {
  readonly options: RateLimitOptions;
  /**
   * Whether a statement may count a request in its own round trip (see PendingCount): the
   * counters are the database's `rate_limits` rows.
   */
  readonly countsInStatements?: boolean;
  /** Counts one request of `client` at `now`. */
  consume(client: RateLimitSubject, now: Date): Promise<RateLimitDecision>;
  /**
   * A bucket's window as it stands at `now`, counting nothing: what a request that is never
   * counted (the health probe) reports in its headers. No open window: the whole limit, and a
   * window's length to its end.
   */
  peek(bucket: string, now: Date): Promise<RateLimitDecision>;
  /** Forgets up to `limit` counters whose window ended before `now`; returns how many. */
  sweep(now: Date, limit?: number): Promise<number>;
}

function decide(
  options: RateLimitOptions,
  points: number,
  resetAt: Date,
  bucket?: string,
): RateLimitDecision {
  return {
    allowed: points <= options.max,
    limit: options.max,
    remaining: Math.max(options.max - points, 0),
    resetAt,
    ...(bucket === undefined ? {} : { bucket }),
  };
}

/** `decide` for a window seen without counting: `points` already spent, none of them this request's. */
function peeked(
  options: RateLimitOptions,
  window: { points: number; expire: number } | undefined,
  now: Date,
) {
  if (!window || window.expire <= now.getTime())
    return decide(options, 0, new Date(now.getTime() + options.windowSeconds * 1000));
  return { ...decide(options, window.points, new Date(window.expire)), allowed: window.points < options.max };
}

/** Seconds until the window of `decision` ends, seen at `now` (RateLimit-Reset, Retry-After). */
export function retryAfterSeconds(decision: RateLimitDecision, now: Date): number {
  return Math.max(1, Math.ceil((decision.resetAt.getTime() - now.getTime()) / 1000));
}

/** Where a subject's count goes when its credential (if any) needs no lookup, else null. */
function bucketWithoutLookup(client: RateLimitSubject): string | null {
  if (typeof client === 'string') return client;
  if (!client.credential) return client.address;
  return client.credential.kind === 'verified' ? client.credential.bucket : null;
}

/** Room for any flood within one window, far from the integer column's overflow. */
const POINTS_CEILING = 2_000_000_000;
/**
 * Batches of one process in flight at once; more requests queue into the next batch. Two rather
 * than four: batches twice the size, half the statements, for a wait of at most one batch
 * (bench: sendMessage 0.38x -> 0.43x of the bare route, p99 1.46x; `GET /api/health` 0.67x -> 0.93x).
 */
const MAX_IN_FLIGHT = 2;

/** What a request's count is computed from, as columns of a batched statement (see rateCountSql). */
export interface RateLimitColumns {
  /** The bucket when no credential is checked: the address, the verified bucket, or the bucket given. */
  address: string;
  /** The credential's bucket, once `lookup` is found live (stored kinds only). */
  bucket: string;
  lookup: string;
  kind: StoredCredentialKind | 'none';
}

/** The columns of a request's count by `client`: a lookup only for a stored credential. */
export function rateLimitColumns(client: RateLimitSubject): RateLimitColumns {
  const resolved = bucketWithoutLookup(client);
  const credential = typeof client === 'string' ? undefined : client.credential;
  if (resolved !== null || !credential || credential.kind === 'verified')
    return { address: resolved ?? '', bucket: '', lookup: '', kind: 'none' };
  return {
    address: (client as RateLimitClient).address,
    bucket: credential.bucket,
    lookup: credential.lookup,
    kind: credential.kind,
  };
}

/**
 * Counting, as common table expressions that any batched statement can carry: the rate limiter's
 * own, and a statement that counts the requests whose work it does (see PendingCount). `source`
 * names a relation of (ord, address, bucket, lookup, kind) columns (RateLimitColumns, `ord` a
 * request's place in the batch). It resolves each request's bucket (its credential's when the
 * credential works, else its address's), adds each bucket's requests to its window or opens a
 * new window, and gives each request its position in the window: `rl_position (ord, key,
 * position, expire)`. Buckets are locked in key order, so that batches never wait in a cycle.
 */
export function rateCountSql(source: SQL, at: SQL, windowEnd: SQL): SQL {
  return sql`
  rl_resolved as (
    select ord, case
      when kind = 'none' then address
      when ${liveCredentialSql(sql`kind`, sql`lookup`, at)} then bucket
      else address end as key
    from ${source}
  ), rl_counted as (
    insert into rate_limits (key, points, expire)
    select key, count(*)::integer, ${windowEnd} from rl_resolved group by key order by key
    on conflict (key) do update set
      points = case when rate_limits.expire > ${at}
        then least(rate_limits.points + excluded.points, ${POINTS_CEILING}::integer)
        else excluded.points end,
      expire = case when rate_limits.expire > ${at} then rate_limits.expire else excluded.expire end
    returning key, points, expire
  ), rl_position as (
    -- A bucket's requests in this batch are the last ones of its count, in batch order.
    select r.ord, c.key, c.expire,
      c.points - count(*) over (partition by c.key) + row_number() over (partition by c.key order by r.ord)
        as position
    from rl_resolved r join rl_counted c on c.key = r.key
  )`;
}

/** One request's place in its window, as rateCountSql answers it. */
export interface RateLimitRow {
  key: string;
  position: number | string;
  expire: string | Date;
}

/** The decision of a request counted at `row` (given as a RateLimitClient when `bucket`). */
export function rateLimitDecision(options: RateLimitOptions, row: RateLimitRow, bucket: boolean) {
  return decide(options, Number(row.position), new Date(row.expire), bucket ? row.key : undefined);
}

/** The rate limiter's own statement, compiled once. */
const countStatement = new PreparedStatement<{
  addresses: string[];
  buckets: string[];
  lookups: string[];
  kinds: string[];
  at: string;
  windowEnd: string;
}>(
  'convene_rate_limit',
  sql`
    with rl_source as (
      select * from unnest(
        ${sql.placeholder('addresses')}::text[], ${sql.placeholder('buckets')}::text[],
        ${sql.placeholder('lookups')}::text[], ${sql.placeholder('kinds')}::text[]
      ) with ordinality as t(address, bucket, lookup, kind, ord)
    ), ${rateCountSql(sql`rl_source`, sql`${sql.placeholder('at')}::timestamptz`, sql`${sql.placeholder('windowEnd')}::timestamptz`)}
    select ord, key, position, expire from rl_position order by ord`,
);

/**
 * A request the rate limiter leaves to the statement that does its work, which counts it in the
 * same round trip (sendMessage's: see appendMessage). The statement calls `settle` once, with
 * the decision, and writes nothing for a request over the limit; a request that ends without
 * reaching such a statement is counted by the limiter all the same (the server's rate-limit hook).
 */
export interface PendingCount {
  readonly client: RateLimitSubject;
  /** When the request arrived. */
  readonly now: Date;
  readonly options: RateLimitOptions;
  /** Set once the request is counted. */
  readonly decision: RateLimitDecision | undefined;
  settle(decision: RateLimitDecision): void;
}

interface Count {
  client: RateLimitSubject;
  now: Date;
}

/**
 * Counters in the database, shared by every node. Requests of this process are counted in
 * batches (see Batcher): while up to two statements are in flight, the next requests queue, and
 * the queue goes out as one prepared `INSERT … SELECT FROM unnest(…) ON CONFLICT DO UPDATE …
 * RETURNING` adding each client's number of requests. The row lock taken by the upsert
 * serialises every batch of one client across nodes, so the count stays exact: each request
 * learns its own position in the window from the count the statement returns.
 */
export class SqlRateLimiter implements RateLimiter {
  readonly countsInStatements = true;
  private readonly batcher = new Batcher<Count, RateLimitDecision>(
    (batch) => this.count(batch),
    MAX_IN_FLIGHT,
  );

  constructor(
    private readonly db: Db,
    readonly options: RateLimitOptions,
  ) {}

  consume(client: RateLimitSubject, now: Date): Promise<RateLimitDecision> {
    return this.batcher.push({ client, now });
  }

  private async count(batch: Count[]): Promise<RateLimitDecision[]> {
    let now = batch[0]!.now;
    for (const { now: at } of batch) if (at > now) now = at;
    const columns = batch.map(({ client }) => rateLimitColumns(client));
    // Counts need not wait for the disk (see bookkeepingDbOf).
    const result = await countStatement.execute(bookkeepingDbOf(this.db), {
      addresses: columns.map((c) => c.address),
      buckets: columns.map((c) => c.bucket),
      lookups: columns.map((c) => c.lookup),
      kinds: columns.map((c) => c.kind),
      at: now.toISOString(),
      windowEnd: new Date(now.getTime() + this.options.windowSeconds * 1000).toISOString(),
    });
    const rows = rowsOf<RateLimitRow & { ord: number | string }>(result);
    if (rows.length !== batch.length) throw new Error('rate limit upsert returned no row for some clients');
    return rows.map((row) =>
      rateLimitDecision(this.options, row, typeof batch[Number(row.ord) - 1]!.client !== 'string'),
    );
  }

  async peek(bucket: string, now: Date): Promise<RateLimitDecision> {
    const [row] = await bookkeepingDbOf(this.db)
      .select({ points: rateLimits.points, expire: rateLimits.expire })
      .from(rateLimits)
      .where(eq(rateLimits.key, bucket));
    return peeked(this.options, row && { points: row.points, expire: row.expire.getTime() }, now);
  }

  async sweep(now: Date, limit = 1000): Promise<number> {
    // Bounded batches through the expiry index, so a sweep never holds many row locks at once;
    // rows another transaction holds (another node's sweep, a request counted) are left to a
    // later turn instead of waited for.
    const expired = this.db
      .select({ key: rateLimits.key })
      .from(rateLimits)
      .where(lt(rateLimits.expire, now))
      .limit(limit)
      .for('update', { skipLocked: true });
    const deleted = await this.db
      .delete(rateLimits)
      .where(inArray(rateLimits.key, expired))
      .returning({ key: rateLimits.key });
    return deleted.length;
  }
}

/**
 * Counters in this process: right where one process owns the database (embedded PGlite, whose
 * data directory admits one server), and for tests. Costs no round trip.
 */
/** How long a credential found live is taken as live without a new lookup (MemoryRateLimiter). */
export const LIVE_FOR_MS = 5_000;

export class MemoryRateLimiter implements RateLimiter {
  private readonly counters = new Map<string, { points: number; expire: number }>();
  /**
   * Credentials found live, by bucket, until when (ms): one lookup per credential every
   * LIVE_FOR_MS instead of one per request (on PGlite a lookup holds the only connection for
   * milliseconds that every other request waits through). A credential revoked meanwhile keeps
   * its own bucket at most that long; its requests are refused by the use cases all the same.
   * Dead credentials are never remembered, so they keep costing their address.
   */
  private readonly live = new Map<string, number>();

  /**
   * @param isLive checks a stored credential (see isLiveCredential); without it, a credential that
   * needs a lookup never counts as a client of its own.
   */
  constructor(
    readonly options: RateLimitOptions,
    private readonly isLive?: (kind: StoredCredentialKind, lookup: string, now: Date) => Promise<boolean>,
  ) {}

  async consume(client: RateLimitSubject, now: Date): Promise<RateLimitDecision> {
    let bucket = bucketWithoutLookup(client);
    if (bucket === null) {
      const { address, credential } = client as RateLimitClient;
      const live =
        credential && credential.kind !== 'verified' && this.isLive
          ? await this.isLiveCached(credential.kind, credential.lookup, credential.bucket, now)
          : false;
      bucket = live && credential ? credential.bucket : address;
    }
    const decision = this.count(bucket, now);
    return typeof client === 'string' ? decision : { ...decision, bucket };
  }

  private async isLiveCached(
    kind: StoredCredentialKind,
    lookup: string,
    bucket: string,
    now: Date,
  ): Promise<boolean> {
    const t = now.getTime();
    if ((this.live.get(bucket) ?? 0) > t) return true;
    const live = (await this.isLive?.(kind, lookup, now)) ?? false;
    if (live) this.live.set(bucket, t + LIVE_FOR_MS);
    else this.live.delete(bucket);
    return live;
  }

  private count(client: string, now: Date): RateLimitDecision {
    const t = now.getTime();
    let counter = this.counters.get(client);
    if (!counter || counter.expire <= t) {
      counter = { points: 0, expire: t + this.options.windowSeconds * 1000 };
      this.counters.set(client, counter);
    }
    counter.points += 1;
    return decide(this.options, counter.points, new Date(counter.expire));
  }

  async peek(bucket: string, now: Date): Promise<RateLimitDecision> {
    return peeked(this.options, this.counters.get(bucket), now);
  }

  async sweep(now: Date, limit = Number.POSITIVE_INFINITY): Promise<number> {
    let n = 0;
    for (const [client, counter] of this.counters) {
      if (n >= limit) break;
      if (counter.expire < now.getTime()) {
        this.counters.delete(client);
        n += 1;
      }
    }
    for (const [bucket, until] of this.live) if (until <= now.getTime()) this.live.delete(bucket);
    return n;
  }
}
