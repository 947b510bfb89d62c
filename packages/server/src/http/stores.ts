import {
  type Database,
  type IdempotencyStore,
  isLiveCredential,
  MemoryRateLimiter,
  type RateLimiter,
  type RateLimitOptions,
  type Sealer,
  SqlIdempotencyStore,
  SqlRateLimiter,
} from '@convene/core';
import type { ServerConfig } from '../env';

/** The storage behind the HTTP policies. */
export interface PolicyStores {
  rateLimiter: RateLimiter;
  /** Pages, their assets and avatars, when they count apart (RATE_LIMIT_PAGES_MAX): see rate-limit.ts. */
  pageRateLimiter?: RateLimiter;
  idempotency: IdempotencyStore;
}

/** The rate limits the configuration sets: the API's, and the pages' when they count apart. */
export function rateLimitsOf(
  config: Pick<ServerConfig, 'rateLimitMax' | 'pageRateLimitMax' | 'rateLimitWindowSeconds'>,
): { api: RateLimitOptions; pages: RateLimitOptions | undefined } {
  const windowSeconds = config.rateLimitWindowSeconds;
  return {
    api: { max: config.rateLimitMax, windowSeconds },
    pages:
      config.pageRateLimitMax === undefined ? undefined : { max: config.pageRateLimitMax, windowSeconds },
  };
}

/**
 * PostgreSQL: everything in the database, so every node shares counters and records. Embedded
 * PGlite admits one server per data directory, so its counters can live in the process (no
 * round trip per request); idempotency records stay in the database to outlive a restart.
 */
export function policyStoresFor(
  database: Pick<Database, 'db' | 'engine'>,
  { api: limits, pages: pageLimits }: ReturnType<typeof rateLimitsOf>,
  box: Sealer,
): PolicyStores {
  const shared = database.engine === 'postgres';
  return {
    rateLimiter: shared
      ? new SqlRateLimiter(database.db, limits)
      : new MemoryRateLimiter(limits, (kind, lookup, now) =>
          isLiveCredential(database.db, kind, lookup, now),
        ),
    // The same counters (rows of `rate_limits` on PostgreSQL, under buckets of their own).
    ...(pageLimits && {
      pageRateLimiter: shared
        ? new SqlRateLimiter(database.db, pageLimits)
        : new MemoryRateLimiter(pageLimits),
    }),
    idempotency: new SqlIdempotencyStore(database.db, box),
  };
}
