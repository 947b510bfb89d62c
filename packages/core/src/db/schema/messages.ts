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
    /** The participants the message mentions (explicitly or by `@Name`); null when none. */
    mentions: uuid('mentions').array(),
    /** The message this one answers, in the same space. */
    replyTo: uuid('reply_to'),
  },
  // Three indexes, one per way messages are read: by event id (stream replays, gap filling), by
  // timestamp (the polling cursor) and by id (replyTo, A2A tasks). Every index is paid on the
  // hottest write; `seq` rises with `eventSeq` under the same row lock, so it needs none.
  (t) => [
    primaryKey({ columns: [t.spaceId, t.eventSeq] }),
    uniqueIndex('messages_space_created_idx').on(t.spaceId, t.createdAt),
    uniqueIndex('messages_space_id_idx').on(t.spaceId, t.id),
  ],
);
