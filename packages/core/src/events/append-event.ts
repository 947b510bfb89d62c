import type { TSpaceEventKind } from '@convene/contract';
import { eq, sql } from 'drizzle-orm';
import type { Clock } from '../clock';
import { spaceEvents, spaces } from '../db/schema';
import type { Executor } from '../db/types';

/** The channel every node LISTENs on; NOTIFY is sent inside the writing transaction. */
export const EVENTS_CHANNEL = 'convene_events';
/** NOTIFY payloads must stay under 8000 bytes; larger events travel as a pointer. */
export const MAX_INLINE_PAYLOAD = 7000;

/** Every stream event a space records, named as on the wire. */
export type SpaceEventKind = TSpaceEventKind;

/** What travels between nodes: the space, its event id, and the event itself when it fits. */
export interface EventNotice {
  spaceId: string;
  seq: number;
  kind: SpaceEventKind;
  data?: unknown;
}

/** Hands out the next event id of a space; the row lock it takes orders concurrent writers. */
export async function nextEventSeq(ex: Executor, spaceId: string): Promise<number> {
  const [row] = await ex
    .update(spaces)
    .set({ eventSeq: sql`${spaces.eventSeq} + 1` })
    .where(eq(spaces.id, spaceId))
    .returning({ seq: spaces.eventSeq });
  if (!row) throw new Error(`space ${spaceId} vanished while appending an event`);
  return row.seq;
}

/** Sends the notice on commit of the enclosing transaction (or at once outside one). */
export async function notifyEvent(ex: Executor, notice: EventNotice): Promise<void> {
  let payload = JSON.stringify(notice);
  if (Buffer.byteLength(payload) > MAX_INLINE_PAYLOAD) {
    payload = JSON.stringify({ spaceId: notice.spaceId, seq: notice.seq, kind: notice.kind });
  }
  await ex.execute(sql`select pg_notify(${EVENTS_CHANNEL}, ${payload})`);
}

/**
 * Records a non-message stream event (participant-status, artifact-*, space-closed) so a stream
 * reconnecting with Last-Event-ID can replay it, and notifies every node. Call it inside the
 * transaction that made the change, so the event exists exactly when the change does.
 */
export async function appendEvent(
  ex: Executor,
  clock: Clock,
  spaceId: string,
  kind: Exclude<SpaceEventKind, 'message'>,
  data: unknown,
): Promise<number> {
  const seq = await nextEventSeq(ex, spaceId);
  await ex.insert(spaceEvents).values({ spaceId, seq, kind, data, createdAt: clock.now() });
  await notifyEvent(ex, { spaceId, seq, kind, data });
  return seq;
}
