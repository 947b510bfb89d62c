import { bigint, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * Every stream event other than `message` (messages are replayed from their own table), kept so
 * that a stream reconnecting with Last-Event-ID can replay what it missed.
 */
export const spaceEvents = pgTable(
  'space_events',
  {
    spaceId: uuid('space_id').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    kind: text('kind').notNull(),
    data: jsonb('data').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.spaceId, t.seq] })],
);
