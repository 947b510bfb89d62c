import {
  type Database,
  type IdempotencyStore,
  isLiveCredential,
  MemoryRateLimiter,
  type RateLimiter,
  type RateLimitOptions,
  type SecretBox,
  SqlIdempotencyStore,
  SqlRateLimiter,
} from '@convene/core';

/** The storage behind the HTTP policies. */
export interface PolicyStores {
  rateLimiter: RateLimiter;
  idempotency: IdempotencyStore;
}

/**
 * PostgreSQL: everything in the database, so every node shares counters and records. Embedded
 * PGlite admits one server per data directory, so its counters can live in the process (no
 * round trip per request); idempotency records stay in the database to outlive a restart.
 */
export function policyStoresFor(
  database: Pick<Database, 'db' | 'engine'>,
  limits: RateLimitOptions,
  box: SecretBox,
): PolicyStores {
  return {
    rateLimiter:
      database.engine === 'postgres'
        ? new SqlRateLimiter(database.db, limits)
        : new MemoryRateLimiter(limits, (kind, lookup, now) =>
            isLiveCredential(database.db, kind, lookup, now),
          ),
    idempotency: new SqlIdempotencyStore(database.db, box),
  };
}
