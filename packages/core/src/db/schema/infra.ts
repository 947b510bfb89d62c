import { integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** Stored responses for Idempotency-Key replays, scoped by method, path and credential. */
export const idempotencyRecords = pgTable('idempotency_records', {
  /** SHA-256 of method, path, credential and Idempotency-Key. */
  scope: text('scope').primaryKey(),
  /** SHA-256 of the request body, to tell a retry from a reuse with another body (422). */
  requestHash: text('request_hash').notNull(),
  /** `running` while the first request is in flight, then `done`. */
  state: text('state', { enum: ['running', 'done'] }).notNull(),
  status: integer('status'),
  headers: jsonb('headers'),
  body: text('body'),
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
  expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
});

/** Fixed-window rate-limit counters shared by every node. */
export const rateLimits = pgTable('rate_limits', {
  key: text('key').primaryKey(),
  points: integer('points').notNull(),
  expire: timestamp('expire', { withTimezone: true, precision: 3 }),
});

/** Service-wide settings, such as the generated SECRET when none is configured. */
export const settings = pgTable('settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
});
