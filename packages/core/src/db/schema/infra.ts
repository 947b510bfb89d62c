import { index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * Stored responses for Idempotency-Key replays, scoped by method, path and credential. A row is
 * inserted inside the transaction of the write it guards, before the write, and holds its
 * response when that transaction commits: a duplicate on any node waits on the uncommitted row
 * and then replays it, and a write that never commits (a crash, a database outage) leaves no row.
 */
export const idempotencyRecords = pgTable(
  'idempotency_records',
  {
    /** SHA-256 of method, path, credential hash and Idempotency-Key. */
    scope: text('scope').primaryKey(),
    /** SHA-256 of the request body and query, to tell a retry from a reuse with another body (422). */
    requestHash: text('request_hash').notNull(),
    /** Always `done` when visible (the row commits with its response); `running` is no longer written. */
    state: text('state', { enum: ['running', 'done'] }).notNull(),
    status: integer('status'),
    /** The response headers worth replaying (content type, Location…), not per-response ones. */
    headers: jsonb('headers'),
    body: text('body'),
    /**
     * What a write recorded inside its own statement instead of a body (sendMessage's group commit
     * writes `{kind, messageId, participants, artifacts}`); the body is rendered from it on replay.
     */
    outcome: jsonb('outcome'),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    /** 24 h after the write: a row past it is forgotten (taken over by a new write) and swept. */
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

/**
 * The server processes running now, for the stream caps: a node renews its row every few
 * seconds while it runs, and the stream slots of a node whose row has lapsed (a crash) stop
 * counting.
 */
export const streamNodes = pgTable('stream_nodes', {
  id: uuid('id').primaryKey(),
  aliveUntil: timestamp('alive_until', { withTimezone: true, precision: 3 }).notNull(),
});

/**
 * One row per open event stream, counted against the caps of its credential and of its remote
 * address across every node (decisions.md: 20 per credential, 200 per address).
 */
export const streamSlots = pgTable(
  'stream_slots',
  {
    id: uuid('id').primaryKey(),
    /** The node serving the stream (stream_nodes). */
    nodeId: uuid('node_id').notNull(),
    /** SHA-256 of the credential; never the credential. */
    credential: text('credential').notNull(),
    /** SHA-256 of the remote address. */
    address: text('address').notNull(),
    openedAt: timestamp('opened_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    index('stream_slots_credential_idx').on(t.credential),
    index('stream_slots_address_idx').on(t.address),
    index('stream_slots_node_id_idx').on(t.nodeId),
  ],
);
