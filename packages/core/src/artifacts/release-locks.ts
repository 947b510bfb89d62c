import { and, eq, isNotNull } from 'drizzle-orm';
import type { Clock } from '../clock';
import { artifacts, spaces } from '../db/schema';
import type { Executor } from '../db/types';
import { appendEvent } from '../events/append-event';
import type { EventBus } from '../events/event-bus';
import { toArtifactSummary } from '../spaces/views';

/**
 * Releases the locks a participant holds (or every lock of the space when participantId is
 * null): leaving, being kicked and closing the space do this in their own transaction. Each
 * lock cleared gets an `artifact-unlocked` event: a live one, or one that lapsed a moment ago
 * and that the expiry sweep (releaseExpiredLocks) has not announced yet.
 *
 * It locks the space row before any artifact row, the order every artifact write uses, so a
 * release and a concurrent lock or write cannot deadlock, and a lock taken just before the
 * release is seen and released.
 */
export async function releaseLocks(
  ex: Executor,
  deps: { clock: Clock; events: EventBus },
  spaceId: string,
  participantId: string | null,
): Promise<void> {
  const now = deps.clock.now();
  await ex.select({ id: spaces.id }).from(spaces).where(eq(spaces.id, spaceId)).for('no key update');
  const where = and(
    eq(artifacts.spaceId, spaceId),
    participantId ? eq(artifacts.lockedBy, participantId) : isNotNull(artifacts.lockedBy),
  );
  const held = await ex
    .select({
      id: artifacts.id,
      name: artifacts.name,
      version: artifacts.version,
      updatedAt: artifacts.updatedAt,
    })
    .from(artifacts)
    .where(where)
    .for('update');
  if (held.length === 0) return;
  await ex.update(artifacts).set({ lockedBy: null, lockedAt: null, lockExpiresAt: null }).where(where);
  for (const row of held) {
    const summary = toArtifactSummary({ ...row, lockedBy: null, lockedAt: null, lockExpiresAt: null }, now);
    await appendEvent(ex, deps, spaceId, 'artifact-unlocked', summary);
  }
}
