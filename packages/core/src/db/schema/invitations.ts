import { integer, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

export const invitations = pgTable(
  'invitations',
  {
    spaceId: uuid('space_id').notNull(),
    id: uuid('id').notNull(),
    /** SHA-256 of the publicInvitationKey. */
    keyHash: text('key_hash').notNull(),
    /** Joins made with this invitation (a record; not capped). */
    joins: integer('joins').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.spaceId, t.id] }), uniqueIndex('invitations_key_hash_idx').on(t.keyHash)],
);
