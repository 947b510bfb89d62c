import { Batcher } from '../db/batcher';
import { rowsOf } from '../db/migrate';
import { DEADLOCK_DETECTED, sqlState } from '../db/pg-error';
import type { Db } from '../db/types';
import type { EventBus } from '../events/event-bus';
import type { EventNotice } from '../events/notice';
import type { IdempotencyGuard } from '../infra/idempotency-store';
import { appendStatement } from './append-statement';

/** A message on its way into the database. */
export interface Outgoing {
  spaceId: string;
  keyHash: string;
  messageId: string;
  type: string;
  content: string;
  now: Date;
  /** The Idempotency-Key record to write with the message (see IdempotencyStore). */
  guard: IdempotencyGuard | undefined;
}

/** A duplicate's record took this send's Idempotency-Key first: nothing was written. */
export type Recorded = 'recorded';

/** What the statement answers for a message it wrote. */
export interface Appended {
  seq: string | number;
  event_seq: string | number;
  /** The context bundle's rows, read by the same statement (json, or its text on some drivers). */
  participants: unknown;
  artifacts: unknown;
}

/** Sending statements of one process in flight at once; more sends queue into the next batch. */
const MAX_IN_FLIGHT = 2;
const batchers = new WeakMap<Db, Batcher<Outgoing, Appended | Recorded | undefined>>();

/**
 * Appends the message, together with the messages other requests of this process are sending
 * at the same moment (one statement, one commit: see Batcher). Undefined when nothing was
 * written: the key is no active sender of an open space; `recorded` when a duplicate's record
 * holds the send's Idempotency-Key. Same-node duplicates are kept out of one batch by the caller.
 */
export function appendMessage(
  db: Db,
  events: EventBus,
  outgoing: Outgoing,
): Promise<Appended | Recorded | undefined> {
  let batcher = batchers.get(db);
  if (!batcher) {
    batcher = new Batcher((batch) => appendBatch(db, events, batch), MAX_IN_FLIGHT);
    batchers.set(db, batcher);
  }
  return batcher.push(outgoing);
}

async function appendBatch(
  db: Db,
  events: EventBus,
  batch: Outgoing[],
): Promise<(Appended | Recorded | undefined)[]> {
  let now = batch[0]!.now;
  for (const item of batch) if (item.now > now) now = item.now;
  const values = {
    spaceIds: batch.map((m) => m.spaceId),
    keyHashes: batch.map((m) => m.keyHash),
    messageIds: batch.map((m) => m.messageId),
    types: batch.map((m) => m.type),
    contents: batch.map((m) => m.content),
    scopes: batch.map((m) => m.guard?.scope ?? null),
    requestHashes: batch.map((m) => m.guard?.requestHash ?? null),
    recordsExpireAt: batch.map((m) => m.guard?.expiresAt.toISOString() ?? null),
    now: now.toISOString(),
    notify: events.notifiesInSql,
  };
  for (let attempt = 0; ; attempt++) {
    try {
      const rows = rowsOf<Appended & { id: string; recorded: boolean; notice: string | null }>(
        await appendStatement.execute(db, values),
      );
      // Committed (one statement, one implicit transaction): publish what it did not notify.
      for (const row of rows) if (row.notice) await events.publish(db, JSON.parse(row.notice) as EventNotice);
      const byId = new Map(rows.map((row) => [row.id, row]));
      return batch.map((m) => {
        const row = byId.get(m.messageId);
        return row?.recorded ? 'recorded' : row;
      });
    } catch (error) {
      // A moderation transaction locking rows in the other order: PostgreSQL picks a victim.
      if (attempt < 3 && sqlState(error) === DEADLOCK_DETECTED) continue;
      throw error;
    }
  }
}
