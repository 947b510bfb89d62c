import type { TArtifactView } from '@convene/contract';
import { and, eq } from 'drizzle-orm';
import { roles, whenClosedOf } from '../auth/authorize';
import { artifacts } from '../db/schema';
import type { Deps } from '../deps';
import { appendEvent } from '../events/append-event';
import { activeLock, toArtifactSummary } from '../spaces/views';
import { artifactWhere, authorizeForUpdate, findArtifact, lockedError, toArtifactView } from './shared';

export interface UnlockArtifactOptions {
  deps: Deps;
  spaceId: string;
  artifactId: string;
  key: string | undefined;
}

/**
 * The holder (muted or not) releases the lock, or the owner force-unlocks it; anyone else gets
 * 423 while someone holds it. Unlocking what nobody holds answers the artifact (200). Clearing a
 * lock — live, or lapsed but not yet announced — emits `artifact-unlocked`.
 */
export async function unlockArtifact({
  deps,
  spaceId,
  artifactId,
  key,
}: UnlockArtifactOptions): Promise<TArtifactView> {
  const { db, clock } = deps;
  return db.transaction(async (tx) => {
    const { caller } = await authorizeForUpdate(tx, clock, {
      spaceId,
      key,
      allow: roles.member,
      whenClosed: whenClosedOf.unlockArtifact,
    });
    const now = clock.now();
    const before = await findArtifact(tx, spaceId, artifactId);
    const held = activeLock(before, now);
    if (held && held.lockedBy !== caller.participant.id && caller.role !== 'owner') {
      throw await lockedError(tx, before, now);
    }
    if (!before.lockedBy) return toArtifactView(before, now);
    const [row] = await tx
      .update(artifacts)
      .set({ lockedBy: null, lockedAt: null, lockExpiresAt: null })
      .where(and(artifactWhere(spaceId, artifactId), eq(artifacts.lockedBy, before.lockedBy)))
      .returning();
    // Cannot miss while the space row is locked; if it ever did, the lock is gone all the same.
    if (!row) return toArtifactView(await findArtifact(tx, spaceId, artifactId), now);
    await appendEvent(tx, deps, spaceId, 'artifact-unlocked', toArtifactSummary(row, now));
    return toArtifactView(row, now);
  });
}
