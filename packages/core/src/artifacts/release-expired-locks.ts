import { and, asc, eq, gt, isNotNull, lte } from 'drizzle-orm';
import { artifacts, spaces } from '../db/schema';
import type { Deps } from '../deps';
import { appendEvent } from '../events/append-event';
import { toArtifactSummary } from '../spaces/views';
import { artifactWhere } from './shared';

export interface ReleaseExpiredLocksOptions {
  deps: Pick<Deps, 'db' | 'clock' | 'events'>;
  /** Locks released per call at most; the caller calls again while it gets this many. */
  limit?: number;
}

/**
 * Announces the locks that lapsed: each one is cleared and gets one `artifact-unlocked` event,
 * as an explicit unlock would, so streams learn of it without anyone touching the artifact.
 * Every node sweeps every second; clearing is conditional on the lock still being lapsed, under
 * the space row lock every artifact write takes first, so a lapse is announced exactly once
 * across nodes and never races a takeover (lockArtifact announces a lapse it takes over itself).
 * Spaces closed or past their TTL are left alone: nothing may follow their end on a stream.
 * Returns how many locks were released.
 */
export async function releaseExpiredLocks({
  deps,
  limit = 100,
}: ReleaseExpiredLocksOptions): Promise<number> {
  const { db, clock } = deps;
  const now = clock.now();
  const lapsed = await db
    .select({ spaceId: artifacts.spaceId, id: artifacts.id })
    .from(artifacts)
    .innerJoin(spaces, eq(spaces.id, artifacts.spaceId))
    .where(
      and(
        isNotNull(artifacts.lockedBy),
        lte(artifacts.lockExpiresAt, now),
        eq(spaces.state, 'open'),
        gt(spaces.expiresAt, now),
      ),
    )
    .orderBy(asc(artifacts.lockExpiresAt))
    .limit(limit);
  let released = 0;
  for (const { spaceId, id } of lapsed) {
    const done = await db.transaction(async (tx) => {
      const [space] = await tx
        .select({ state: spaces.state, expiresAt: spaces.expiresAt })
        .from(spaces)
        .where(eq(spaces.id, spaceId))
        .for('no key update');
      if (space?.state !== 'open' || space.expiresAt <= now) return false;
      const [row] = await tx
        .update(artifacts)
        .set({ lockedBy: null, lockedAt: null, lockExpiresAt: null })
        .where(
          and(artifactWhere(spaceId, id), isNotNull(artifacts.lockedBy), lte(artifacts.lockExpiresAt, now)),
        )
        .returning();
      // Another node's sweep, a takeover, an unlock or a refresh got there first.
      if (!row) return false;
      await appendEvent(tx, deps, spaceId, 'artifact-unlocked', toArtifactSummary(row, now));
      return true;
    });
    if (done) released += 1;
  }
  return released;
}
