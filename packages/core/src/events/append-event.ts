import { eq, sql } from 'drizzle-orm';
import type { Clock } from '../clock';
import { spaceEvents, spaces } from '../db/schema';
import type { Executor } from '../db/types';
import { notifyWebhookWorkersSql } from '../webhooks/notify';
import type { EventBus } from './event-bus';
import type { SpaceEventKind } from './notice';

export * from './notice';

/** Hands out the next event id of a space; the row lock it takes orders concurrent writers. */
export async function nextEventSeq(ex: Executor, spaceId: string): Promise<number> {
  return (await takeEventSeq(ex, spaceId)).seq;
}

async function takeEventSeq(ex: Executor, spaceId: string): Promise<{ seq: number; hasWebhooks: boolean }> {
  const [row] = await ex
    .update(spaces)
    .set({ eventSeq: sql`${spaces.eventSeq} + 1` })
    .where(eq(spaces.id, spaceId))
    .returning({ seq: spaces.eventSeq, hasWebhooks: spaces.hasWebhooks });
  if (!row) throw new Error(`space ${spaceId} vanished while appending an event`);
  return row;
}

/**
 * Records a non-message stream event (participant-status, artifact-*, space-closed,
 * webhook-disabled) so a stream reconnecting with Last-Event-ID can replay it, and notifies every
 * node (and, in a space with webhooks, the webhook workers, which queue it from the log). Call it
 * inside the transaction that made the change, so the event exists exactly when the change does.
 */
export async function appendEvent(
  ex: Executor,
  { clock, events }: { clock: Clock; events: EventBus },
  spaceId: string,
  kind: Exclude<SpaceEventKind, 'message'>,
  data: unknown,
): Promise<number> {
  const { seq, hasWebhooks } = await takeEventSeq(ex, spaceId);
  await ex.insert(spaceEvents).values({ spaceId, seq, kind, data, createdAt: clock.now() });
  await events.publish(ex, { spaceId, seq, kind, data });
  // A wake-up for the webhook workers (they also look every few seconds): the queue is filled
  // from the event log, so the notice carries nothing.
  if (hasWebhooks) await ex.execute(sql`select ${notifyWebhookWorkersSql}`);
  return seq;
}
