import { eq, sql } from 'drizzle-orm';
import type { Clock } from '../clock';
import { spaceEvents, spaces } from '../db/schema';
import type { Executor } from '../db/types';
import type { EventBus } from './event-bus';
import type { SpaceEventKind } from './notice';

export * from './notice';

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

/**
 * Records a non-message stream event (participant-status, artifact-*, space-closed) so a stream
 * reconnecting with Last-Event-ID can replay it, and notifies every node. Call it inside the
 * transaction that made the change, so the event exists exactly when the change does.
 */
export async function appendEvent(
  ex: Executor,
  { clock, events }: { clock: Clock; events: EventBus },
  spaceId: string,
  kind: Exclude<SpaceEventKind, 'message'>,
  data: unknown,
): Promise<number> {
  const seq = await nextEventSeq(ex, spaceId);
  await ex.insert(spaceEvents).values({ spaceId, seq, kind, data, createdAt: clock.now() });
  await events.publish(ex, { spaceId, seq, kind, data });
  return seq;
}
