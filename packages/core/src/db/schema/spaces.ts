import { getTableColumns, type SQL, sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  customType,
  index,
  integer,
  pgTable,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';

const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

export const spaces = pgTable(
  'spaces',
  {
    id: uuid('id').primaryKey(),
    name: text('name').notNull(),
    description: text('description').notNull(),
    agenda: text('agenda').notNull().default(''),
    privacy: text('privacy', { enum: ['public', 'private'] }).notNull(),
    /** `open` until closeSpace; expiry is derived from `expiresAt`, never written here. */
    state: text('state', { enum: ['open', 'closed'] })
      .notNull()
      .default('open'),
    ttlSeconds: integer('ttl_seconds').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
    closedAt: timestamp('closed_at', { withTimezone: true, precision: 3 }),
    /** Last message sequence number handed out (MessageView.seq); bumped under the row lock. */
    messageSeq: bigint('message_seq', { mode: 'number' }).notNull().default(0),
    /**
     * Bytes of artifact content the space stores, every version counted (UTF-8): bounded by
     * limits.artifactBytesPerSpace, bumped by the statement that writes a version.
     */
    artifactBytes: bigint('artifact_bytes', { mode: 'number' }).notNull().default(0),
    /** Last stream event id handed out; messages and other events share this sequence. */
    eventSeq: bigint('event_seq', { mode: 'number' }).notNull().default(0),
    /** Timestamp of the newest message, so the next one can be made strictly later. */
    lastMessageAt: timestamp('last_message_at', { withTimezone: true, precision: 6, mode: 'string' }),
    /**
     * While later than the database's clock, some node has live listeners on this space (streams,
     * MCP waits) and renews it: only then does a message NOTIFY the nodes. Database time, so every
     * node and the sending statement compare one clock.
     */
    streamedUntil: timestamp('streamed_until', { withTimezone: true, precision: 3 }),
    /**
     * What /ask searches of a space, kept up to date by the database: name (A), description (B)
     * and agenda (C), indexed for public open spaces only, so a query never reads every space.
     */
    search: tsvector('search')
      .notNull()
      .generatedAlwaysAs(
        (): SQL =>
          sql`setweight(to_tsvector('english', ${spaces.name}), 'A') || setweight(to_tsvector('english', ${spaces.description}), 'B') || setweight(to_tsvector('english', ${spaces.agenda}), 'C')`,
      ),
    /** The owner's budget against runaway senders: messages per participant per minute; null, none. */
    maxMessagesPerMinute: integer('max_messages_per_minute'),
    /**
     * Whether the space has an enabled webhook: a write to it then NOTIFYs the webhook workers.
     * Kept on the row every write already updates, so a space without webhooks pays nothing.
     */
    hasWebhooks: boolean('has_webhooks').notNull().default(false),
  },
  (t) => [
    index('spaces_public_open_idx')
      .on(t.createdAt)
      .where(sql`${t.privacy} = 'public' and ${t.state} = 'open'`),
    // What the retention sweep looks for: spaces past their TTL, and closed ones.
    index('spaces_expires_at_idx').on(t.expiresAt),
    index('spaces_closed_at_idx').on(t.closedAt).where(sql`${t.closedAt} is not null`),
    index('spaces_public_search_idx')
      .using('gin', t.search)
      .where(sql`${t.privacy} = 'public' and ${t.state} = 'open'`),
  ],
);

const { search: _search, ...withoutSearch } = getTableColumns(spaces);
/**
 * Every column but `search`: what reading a space selects. The search vector can be as large as
 * the texts it indexes, and only /ask needs it.
 */
export const spaceColumns = withoutSearch;
