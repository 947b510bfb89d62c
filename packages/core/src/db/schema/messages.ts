import {
  bigint,
  boolean,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

export const messages = pgTable(
  'messages',
  {
    spaceId: uuid('space_id').notNull(),
    id: uuid('id').notNull(),
    /** 1, 2, 3… per space, in commit order (MessageView.seq). */
    seq: bigint('seq', { mode: 'number' }).notNull(),
    /** The stream event id of this message, from the space's shared event sequence. */
    eventSeq: bigint('event_seq', { mode: 'number' }).notNull(),
    senderId: uuid('sender_id').notNull(),
    senderName: text('sender_name').notNull(),
    isOwner: boolean('is_owner').notNull(),
    type: text('type', { enum: ['text', 'image', 'html'] }).notNull(),
    content: text('content').notNull(),
    /** Strictly increasing within a space, microsecond precision: the polling cursor. */
    createdAt: timestamp('created_at', { withTimezone: true, precision: 6, mode: 'string' }).notNull(),
  },
  // Two indexes, one per way messages are read: by event id (stream replays, gap filling) and by
  // timestamp (the polling cursor). Every index is paid on the hottest write; `id` is a random
  // UUID minted by the server and nothing reads a message by it, and `seq` rises with `eventSeq`
  // under the same row lock.
  (t) => [
    primaryKey({ columns: [t.spaceId, t.eventSeq] }),
    uniqueIndex('messages_space_created_idx').on(t.spaceId, t.createdAt),
  ],
);
