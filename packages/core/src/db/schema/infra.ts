import { index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Stored responses for Idempotency-Key replays, scoped by method, path and credential. A row is
 * claimed (`running`) by the first request with one INSERT … ON CONFLICT, so duplicates on any
 * node wait for it instead of running twice.
 */
export const idempotencyRecords = pgTable(
  'idempotency_records',
  {
    /** SHA-256 of method, path, credential hash and Idempotency-Key. */
    scope: text('scope').primaryKey(),
    /** SHA-256 of the request body and query, to tell a retry from a reuse with another body (422). */
    requestHash: text('request_hash').notNull(),
    /** `running` while the first request is in flight, then `done`. */
    state: text('state', { enum: ['running', 'done'] }).notNull(),
    status: integer('status'),
    /** The response headers worth replaying (content type, Location…), not per-response ones. */
    headers: jsonb('headers'),
    body: text('body'),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    /**
     * While `running`: the end of the claim's lease (a node that died mid-request frees its claim
     * then). Once `done`: 24 h after completion. Either way, a row past it is free to take over and
     * is swept.
     */
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [index('idempotency_records_expires_at_idx').on(t.expiresAt)],
);

/** Fixed-window rate-limit counters shared by every node: one row per client. */
export const rateLimits = pgTable(
  'rate_limits',
  {
    /** SHA-256 of the client: the credential presented, else the remote address. Never the credential. */
    key: text('key').primaryKey(),
    /** Requests counted in the current window. */
    points: integer('points').notNull(),
    /** End of the current window; the next request after it starts a new window at 1. */
    expire: timestamp('expire', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [index('rate_limits_expire_idx').on(t.expire)],
);

/** Service-wide settings, such as the generated SECRET when none is configured. */
export const settings = pgTable('settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
});
