import {
  bigint,
  boolean,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';

/**
 * A participant's inbox: one row per message that mentions them or replies to one of theirs,
 * written by the sending statement. The inbox reads it after the participant's `last_read_seq`.
 */
export const inboxEntries = pgTable(
  'inbox_entries',
  {
    spaceId: uuid('space_id').notNull(),
    participantId: uuid('participant_id').notNull(),
    /** The message's seq (MessageView.seq): the inbox position is counted in it. */
    seq: bigint('seq', { mode: 'number' }).notNull(),
    /** The message's event id, by which the message row is found. */
    eventSeq: bigint('event_seq', { mode: 'number' }).notNull(),
    mention: boolean('mention').notNull(),
    reply: boolean('reply').notNull(),
  },
  (t) => [primaryKey({ columns: [t.spaceId, t.participantId, t.seq] })],
);

/**
 * Per-sender message counts of spaces with a `max_messages_per_minute`, in fixed windows: written
 * by the sending statement under the space row lock, so every node counts the same messages.
 */
export const sendBudgets = pgTable(
  'send_budgets',
  {
    spaceId: uuid('space_id').notNull(),
    participantId: uuid('participant_id').notNull(),
    /** The end of the current one-minute window. */
    windowEndsAt: timestamp('window_ends_at', { withTimezone: true, precision: 3 }).notNull(),
    /** Messages attempted in the window (refused ones included). */
    used: integer('used').notNull(),
  },
  (t) => [primaryKey({ columns: [t.spaceId, t.participantId] })],
);

/** Signed webhooks a participant registered for a space's events (Standard Webhooks). */
export const webhooks = pgTable(
  'webhooks',
  {
    spaceId: uuid('space_id').notNull(),
    id: uuid('id').notNull(),
    /** The participant who registered it: it receives what their key may read, while they are live. */
    participantId: uuid('participant_id').notNull(),
    url: text('url').notNull(),
    /** The event types delivered; null for every type. */
    events: text('events').array(),
    /** The signing secret (`whsec_…`), AES-256-GCM under SECRET: signing needs it back. */
    secretEnc: text('secret_enc').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    lastSuccessAt: timestamp('last_success_at', { withTimezone: true, precision: 3 }),
    lastFailureAt: timestamp('last_failure_at', { withTimezone: true, precision: 3 }),
    /** The last failure, as shown to its owner (a status or a network error, never a body). */
    lastError: text('last_error'),
    /** Failed attempts since the last success. */
    failures: integer('failures').notNull().default(0),
    /** Set when delivery gave up (see failWebhookDelivery); nothing more is queued for it. */
    disabledAt: timestamp('disabled_at', { withTimezone: true, precision: 3 }),
    /**
     * The space's event id up to which events have been queued for it (webhook_deliveries): the
     * queue is filled from the space's event log, never by the writing statements.
     */
    cursorSeq: bigint('cursor_seq', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.spaceId, t.id] })],
);

/**
 * The durable delivery queue: one row per event and webhook, queued from the space's event log by
 * whichever node takes the webhook's row (queueWebhookDeliveries). Any node claims due rows (`for update skip locked`, then a lease), so each is delivered
 * by one node at a time; a row is deleted once delivered or given up.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    spaceId: uuid('space_id').notNull(),
    /** Also the `webhook-id` header (`msg_` + this id): the same on every attempt. */
    id: uuid('id').notNull(),
    webhookId: uuid('webhook_id').notNull(),
    /** The exact body signed and sent: `{type, timestamp, data}`. */
    payload: text('payload').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    /** When the next attempt is due. */
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, precision: 3 }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    /** While later than now, a node is attempting it; a node that dies mid-attempt frees it then. */
    lockedUntil: timestamp('locked_until', { withTimezone: true, precision: 3 }),
  },
  (t) => [
    primaryKey({ columns: [t.spaceId, t.id] }),
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt),
  ],
);

/**
 * Sessions of the MCP endpoint (Streamable HTTP), kept in the database so that any node serves
 * any request of a session, its GET notification stream included.
 */
export const mcpSessions = pgTable(
  'mcp_sessions',
  {
    /** SHA-256 of the `Mcp-Session-Id`, a random secret the client holds. */
    id: text('id').primaryKey(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    /** Refreshed by use; the session is forgotten after it. */
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [index('mcp_sessions_expires_at_idx').on(t.expiresAt)],
);

/** The resources an MCP session subscribed to (`resources/subscribe`). */
export const mcpSubscriptions = pgTable(
  'mcp_subscriptions',
  {
    /** mcp_sessions.id (the hash). */
    sessionId: text('session_id').notNull(),
    uri: text('uri').notNull(),
    spaceId: uuid('space_id').notNull(),
    /** The subscriber, so that their departure ends the subscription. */
    participantId: uuid('participant_id').notNull(),
    /**
     * The space's last event id when it was subscribed: a stream that starts listening later
     * tells of a change made in between (see resourcesChangedSince).
     */
    fromSeq: bigint('from_seq', { mode: 'number' }).notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.uri] })],
);
