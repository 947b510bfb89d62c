import { inArray, lt, sql } from 'drizzle-orm';
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
}

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
  /** Counts one request of `client` at `now`. */
  consume(client: string, now: Date): Promise<RateLimitDecision>;
  /** Forgets up to `limit` counters whose window ended before `now`; returns how many. */
  sweep(now: Date, limit?: number): Promise<number>;
}

function decide(options: RateLimitOptions, points: number, resetAt: Date): RateLimitDecision {
  return {
    allowed: points <= options.max,
    limit: options.max,
    remaining: Math.max(options.max - points, 0),
    resetAt,
  };
}

/**
 * Counters in the database, shared by every node: one `INSERT … ON CONFLICT DO UPDATE … RETURNING`
 * per request, one round trip. The row lock taken by the upsert serialises concurrent requests of
 * one client, so the count is exact across nodes.
 */
export class SqlRateLimiter implements RateLimiter {
  constructor(
    private readonly db: Db,
    readonly options: RateLimitOptions,
  ) {}

  async consume(client: string, now: Date): Promise<RateLimitDecision> {
    const at = now.toISOString();
    const windowEnd = new Date(now.getTime() + this.options.windowSeconds * 1000);
    const live = sql`${rateLimits.expire} > ${at}::timestamptz`;
    const [row] = await this.db
      .insert(rateLimits)
      .values({ key: client, points: 1, expire: windowEnd })
      .onConflictDoUpdate({
        target: rateLimits.key,
        set: {
          // Counting stops just past the limit: enough to refuse, and no overflow under a flood.
          points: sql`case when ${live} then least(${rateLimits.points} + 1, ${this.options.max + 1}::integer) else 1 end`,
          expire: sql`case when ${live} then ${rateLimits.expire} else excluded.expire end`,
        },
      })
      .returning({ points: rateLimits.points, expire: rateLimits.expire });
    if (!row) throw new Error('rate limit upsert returned no row');
    return decide(this.options, row.points, new Date(row.expire));
  }

  async sweep(now: Date, limit = 1000): Promise<number> {
    // Bounded batches through the expiry index, so a sweep never holds many row locks at once.
    const expired = this.db
      .select({ key: rateLimits.key })
      .from(rateLimits)
      .where(lt(rateLimits.expire, now))
      .limit(limit);
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
export class MemoryRateLimiter implements RateLimiter {
  private readonly counters = new Map<string, { points: number; expire: number }>();

  constructor(readonly options: RateLimitOptions) {}

  async consume(client: string, now: Date): Promise<RateLimitDecision> {
    const t = now.getTime();
    let counter = this.counters.get(client);
    if (!counter || counter.expire <= t) {
      counter = { points: 0, expire: t + this.options.windowSeconds * 1000 };
      this.counters.set(client, counter);
    }
    counter.points += 1;
    return decide(this.options, counter.points, new Date(counter.expire));
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
    return n;
  }
}
