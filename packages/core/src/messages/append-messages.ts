import type { TParticipantView } from '@convene/contract';
import { SENDING_CONNECTIONS, sendingDbOf } from '../db';
import { Batcher } from '../db/batcher';
import { isEmbedded } from '../db/engine';
import { rowsOf } from '../db/migrate';
import { retryOnDeadlock } from '../db/pg-error';
import type { Db } from '../db/types';
import type { CoreConfig, WriteDeadline } from '../deps';
import type { EventBus } from '../events/event-bus';
import type { EventNotice } from '../events/notice';
import type { IdempotencyGuard } from '../infra/idempotency-store';
import {
  type PendingCount,
  type RateLimitRow,
  rateLimitColumns,
  rateLimitDecision,
} from '../infra/rate-limiter';
import {
  type ChangedParticipant,
  type ParticipantsAt,
  type ParticipantsCache,
  participantsCacheOf,
} from '../spaces/context-cache';
import { jsonArray } from '../spaces/views';
import { type AppendValues, appendStatement } from './append-statement';

/** A message on its way into the database. */
export interface Outgoing {
  spaceId: string;
  keyHash: string;
  messageId: string;
  type: string;
  content: string;
  /** Participants mentioned explicitly. */
  mentions: string[];
  replyTo: string | null;
  /** The text after each `@` of a text message, matched against names by the statement. */
  names: string[];
  now: Date;
  /** The Idempotency-Key record to write with the message (see IdempotencyStore). */
  guard: IdempotencyGuard | undefined;
  /**
   * The request's count against the rate limit, when left to this statement: settled by the
   * first statement that runs the message (a request over the limit writes nothing).
   */
  count?: PendingCount | undefined;
  /** The request's deadline, where it has one (REST's 30 s): see WriteDeadline. */
  deadline?: WriteDeadline | undefined;
}

/** The request was answered (503) before its message went out: nothing was written. */
export type Abandoned = 'abandoned';

/** A duplicate's record took this send's Idempotency-Key first: nothing was written. */
export type Recorded = 'recorded';

/** What the statement answers for a message it wrote, or refused although its sender may send. */
export interface Appended {
  seq: string | number;
  event_seq: string | number;
  mentions: string[] | string | null;
  /** The space's participants, as the same statement saw them (see ParticipantsCache). */
  participants: readonly TParticipantView[];
  /** The context bundle's artifacts, read by the same statement (json, or its text on some drivers). */
  artifacts: unknown;
  /**
   * Why nothing was written although the sender may send: a bad mention or reply, or the budget
   * (`budgeted`: the plain statement left a space with a budget to the full one).
   */
  refused: 'mention' | 'reply' | 'budget' | 'budgeted' | null;
  /** The mention refused, or the end of the budget window. */
  detail: string | null;
  budget: number | null;
}

/**
 * One sending statement of a process in flight, and the sends arriving meanwhile queue into the
 * next: larger batches, fewer statements (bench, interleaved with the previous two in flight:
 * PostgreSQL CPU per message -25 to -35 %, server -10 to -15 %, p99 lower at 16, 50 and 200
 * connections). A statement out for longer than STALLED_MS (waiting on a row lock, a slow commit)
 * lets a second one go, so that a stall never holds every sender of the process. On the embedded
 * database (one connection, in this thread) one statement runs at a time and the sends of one
 * turn of the event loop go together (Batcher's sameTurn): bench, PGlite, 16 connections, one
 * space each: 249 -> 987 req/s (0.32 -> 1.13x its bare route), PGlite's time per message
 * 1.3 -> 0.25 ms in batches of 16.
 */
const MAX_IN_FLIGHT = SENDING_CONNECTIONS;
const STALLED_MS = 20;
const batchers = new WeakMap<Db, Batcher<Outgoing, Appended | Recorded | Abandoned | undefined>>();

/** What a batch's statement needs besides its messages. */
interface Sending {
  db: Db;
  events: EventBus;
  config: CoreConfig;
  participants: ParticipantsCache;
}

/**
 * Appends the message, together with the messages other requests of this process are sending
 * at the same moment (one statement, one commit: see Batcher). Undefined when nothing was
 * written: the key is no active sender of an open space; `recorded` when a duplicate's record
 * holds the send's Idempotency-Key. Same-node duplicates are kept out of one batch by the caller.
 */
export function appendMessage(
  db: Db,
  events: EventBus,
  config: CoreConfig,
  outgoing: Outgoing,
): Promise<Appended | Recorded | Abandoned | undefined> {
  let batcher = batchers.get(db);
  if (!batcher) {
    const sending: Sending = { db: sendingDbOf(db), events, config, participants: participantsCacheOf(db) };
    batcher = isEmbedded(sending.db)
      ? new Batcher((batch) => appendBatch(sending, batch), 1, { sameTurn: true })
      : new Batcher((batch) => appendBatch(sending, batch), MAX_IN_FLIGHT, { overlapAfterMs: STALLED_MS });
    batchers.set(db, batcher);
  }
  return batcher.push(outgoing);
}

async function appendBatch(
  sending: Sending,
  queued: Outgoing[],
): Promise<(Appended | Recorded | Abandoned | undefined)[]> {
  // What waited past its request's deadline stays out; the rest is committing from now on.
  const batch = queued.filter((m) => !m.deadline?.abandoned());
  for (const m of batch) m.deadline?.committing();
  if (batch.length < queued.length) {
    const answers = batch.length > 0 ? await appendLive(sending, batch) : [];
    // The batch keeps the queue's order: its answers are handed out in turn.
    let next = 0;
    return queued.map((m) => (batch[next] === m ? answers[next++] : 'abandoned'));
  }
  return appendLive(sending, batch);
}

async function appendLive(sending: Sending, batch: Outgoing[]): Promise<(Appended | Recorded | undefined)[]> {
  // The everyday send (no mention, no reply, no budget) runs the plain statement, which plans and
  // executes no more than sending did before messages could be addressed or budgeted; the rest,
  // and what the plain one leaves to it (spaces with a budget), run the full one.
  const full = batch.some((m) => m.replyTo !== null || m.mentions.length > 0 || m.names.length > 0);
  const answers = await run(sending, full, batch);
  if (full) return answers;
  const deferred = batch.filter((_, i) => (answers[i] as Appended | undefined)?.refused === 'budgeted');
  if (deferred.length === 0) return answers;
  const again = new Map(
    (await run(sending, true, deferred)).map((answer, i) => [deferred[i]!.messageId, answer]),
  );
  return batch.map((m, i) => (again.has(m.messageId) ? again.get(m.messageId) : answers[i]));
}

/** A row of the sending statement: a message's outcome, and its count when the statement counted it. */
type Row = Omit<Appended, 'participants'> & {
  id: string;
  recorded: boolean;
  notice: string | null;
  /** The participants changed since the space's snapshot in contextSince (all without one). */
  participants: unknown;
  /** The statement's snapshot, where it read the participants. */
  snapshot: string | null;
  rate_key?: RateLimitRow['key'] | null;
  rate_position?: RateLimitRow['position'] | null;
  rate_expire?: RateLimitRow['expire'] | null;
};

async function run(
  { db, events, config, participants }: Sending,
  full: boolean,
  batch: Outgoing[],
): Promise<(Appended | Recorded | undefined)[]> {
  let now = batch[0]!.now;
  for (const item of batch) if (item.now > now) now = item.now;
  // Each space's participants are read from where this process has them; where a guarded send
  // records its answer, which holds all of them, the statement reads them all (see `context` in
  // append-statement.ts), and they replace the cached ones whole.
  const bases = new Map<string, ParticipantsAt | undefined>();
  for (const m of batch) if (!bases.has(m.spaceId)) bases.set(m.spaceId, participants.get(m.spaceId));
  const values: AppendValues = {
    spaceIds: batch.map((m) => m.spaceId),
    keyHashes: batch.map((m) => m.keyHash),
    messageIds: batch.map((m) => m.messageId),
    types: batch.map((m) => m.type),
    contents: batch.map((m) => m.content),
    scopes: batch.map((m) => m.guard?.scope ?? null),
    requestHashes: batch.map((m) => m.guard?.requestHash ?? null),
    recordsExpireAt: batch.map((m) => m.guard?.expiresAt.toISOString() ?? null),
    contextSince: batch.map((m) => bases.get(m.spaceId)?.snapshot ?? null),
    now: now.toISOString(),
    notify: events.notifiesInSql,
    ...(full
      ? {
          replyTos: batch.map((m) => m.replyTo),
          mentionOrds: batch.flatMap((m, i) => m.mentions.map(() => i + 1)),
          mentionIds: batch.flatMap((m) => m.mentions),
          nameOrds: batch.flatMap((m, i) => m.names.map(() => i + 1)),
          names: batch.flatMap((m) => m.names),
        }
      : {}),
  };
  // Requests left to this statement to count (and not counted by an earlier one of the batch).
  const counts = batch.map((m) => (m.count && !m.count.decision ? m.count : undefined));
  const counting = counts.find((c) => c !== undefined);
  if (counting) {
    const columns = counts.map((c) => (c ? rateLimitColumns(c.client) : undefined));
    Object.assign(values, {
      rlAddresses: columns.map((c) => c?.address ?? ''),
      rlBuckets: columns.map((c) => c?.bucket ?? ''),
      rlLookups: columns.map((c) => c?.lookup ?? ''),
      rlKinds: columns.map((c) => c?.kind ?? 'skip'),
      rlWindowEnd: new Date(now.getTime() + counting.options.windowSeconds * 1000).toISOString(),
      rlMax: counting.options.max,
    });
  }
  const statement = appendStatement({
    full,
    guarded: batch.some((m) => m.guard !== undefined),
    counted: counting !== undefined,
  });
  // A moderation transaction locking rows in the other order: PostgreSQL picks a victim.
  return retryOnDeadlock(4, async () => {
    const rows = rowsOf<Row>(await statement.execute(db, values));
    // Committed (one statement, one implicit transaction): publish what it did not notify, and
    // this node's streams hear of it now, without waiting for the bus (in each space's order).
    const notices = rows
      .flatMap((row) => (row.notice ? [JSON.parse(row.notice) as EventNotice] : []))
      .sort((a, b) => a.seq - b.seq);
    if (!events.notifiesInSql) for (const notice of notices) await events.publish(db, notice);
    for (const notice of notices) events.committed(notice);
    const byId = new Map(rows.map((row) => [row.id, row]));
    // Each space's participants once, from the first of its rows that read them.
    const read = new Map<string, readonly TParticipantView[]>();
    for (const m of batch) {
      const row = byId.get(m.messageId);
      if (!row?.snapshot || read.has(m.spaceId)) continue;
      const rows = jsonArray<ChangedParticipant>(row.participants);
      read.set(
        m.spaceId,
        participants.advance(config, m.spaceId, bases.get(m.spaceId), rows, row.snapshot).views,
      );
    }
    return batch.map((m, i) => {
      const row = byId.get(m.messageId);
      const count = counts[i];
      if (count && row?.rate_key)
        count.settle(
          rateLimitDecision(
            count.options,
            { key: row.rate_key, position: row.rate_position!, expire: row.rate_expire! },
            typeof count.client !== 'string',
          ),
        );
      if (!row || (row.seq === null && !row.recorded && row.refused === null)) return undefined;
      return row.recorded ? 'recorded' : { ...row, participants: read.get(m.spaceId) ?? [] };
    });
  });
}
