import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  index,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

export const participantStatuses = ['waitingForApproval', 'active', 'muted', 'left', 'kicked'] as const;

/**
 * Everyone in a space, the owner included (isOwner). The owner key lives on the owner's row.
 * Rows are never deleted but with their whole space (purgeSpaces): processes cache a space's
 * participants and read only the rows changed since (`changed_by`, a column of migration 0014
 * that this schema leaves out; see spaces/context-cache.ts), which cannot see a deletion.
 */
export const participants = pgTable(
  'participants',
  {
    spaceId: uuid('space_id').notNull(),
    id: uuid('id').notNull(),
    name: text('name').notNull(),
    role: text('role').notNull().default(''),
    isOwner: boolean('is_owner').notNull().default(false),
    isHuman: boolean('is_human').notNull().default(false),
    status: text('status', { enum: participantStatuses }).notNull(),
    /** SHA-256 of the participant (or owner) key; null until the key is minted. */
    keyHash: text('key_hash'),
    /**
     * AES-256-GCM copy of the key, kept only where it must be handed out again: for a human
     * linked through X-User-Token (getMySpaceKey) and for a private-space joiner until approval
     * is polled (getJoinStatus).
     */
    keyEnc: text('key_enc'),
    /** The invitation a joiner came through; getJoinStatus only answers to that same key. */
    invitationId: uuid('invitation_id'),
    /**
     * SHA-256 of the pollToken a private-space join answered with: only its holder collects the
     * key (the invitation key is shared). Cleared with invitationId once the window in which the
     * joiner may collect the key again is over (keyCollectedAt).
     */
    pollTokenHash: text('poll_token_hash'),
    /**
     * When getJoinStatus first handed out the key: the same joiner (its invitation key and
     * pollToken) may collect it again for a while, so an answer lost on the way is not a key lost
     * for good; then the sweep clears the ticket (invitationId, pollTokenHash, the sealed key).
     */
    keyCollectedAt: timestamp('key_collected_at', { withTimezone: true, precision: 3 }),
    /** The human this participant is linked to (X-User-Token at create or join). */
    userId: uuid('user_id'),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
    /**
     * The last time the server saw this participant's key work (any authenticated call, an open
     * stream), written at most every few seconds per key (see recordPresence): presence the server
     * vouches for, never a client's claim.
     */
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true, precision: 3 }),
    /** The inbox read position: the highest message seq acknowledged; it never moves back. */
    lastReadSeq: bigint('last_read_seq', { mode: 'number' }).notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.spaceId, t.id] }),
    uniqueIndex('participants_key_hash_idx').on(t.keyHash),
    index('participants_user_idx').on(t.userId),
    index('participants_key_collected_idx').on(t.keyCollectedAt).where(sql`key_collected_at is not null`),
  ],
);
