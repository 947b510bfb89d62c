import type { TLockResult } from '@convene/contract';
import { and, eq, isNull, lte, or, sql } from 'drizzle-orm';
import { roles, whenClosedOf } from '../auth/authorize';
import { artifacts } from '../db/schema';
import type { Deps } from '../deps';
import { appendEvent } from '../events/append-event';
import { activeLock, toArtifactSummary } from '../spaces/views';
import {
  artifactWhere,
  authorizeForUpdate,
  findArtifact,
  lockExpiry,
  lockedError,
  refuseMuted,
  toLockResult,
} from './shared';

export interface LockArtifactOptions {
  deps: Deps;
  spaceId: string;
  artifactId: string;
  key: string | undefined;
}

/**
 * Owner or active participant takes the exclusive edit lock for `lockTtlSeconds`. Taking it is
 * one conditional UPDATE that matches only a free, lapsed or already-own lock, so two nodes can
 * never both succeed. Locking what you hold refreshes it (200, no event). Events: `artifact-locked`
 * when the holder changes or the lock was free; before it, `artifact-unlocked` when a lapsed lock
 * is taken over (the lapse had not been announced yet).
 */
export async function lockArtifact({
  deps,
  spaceId,
  artifactId,
  key,
}: LockArtifactOptions): Promise<TLockResult> {
  const { db, clock, config } = deps;
  return db.transaction(async (tx) => {
    const { caller } = await authorizeForUpdate(tx, clock, {
      spaceId,
      key,
      allow: roles.member,
      whenClosed: whenClosedOf.lockArtifact,
    });
    refuseMuted(caller, 'lock artifacts');
    const me = caller.participant.id;
    const now = clock.now();
    const before = await findArtifact(tx, spaceId, artifactId);
    const [row] = await tx
      .update(artifacts)
      .set({
        lockedBy: me,
        // A refresh keeps the time the lock was taken; anything else takes it now.
        lockedAt: sql`case when ${artifacts.lockedBy} = ${me} and ${artifacts.lockExpiresAt} > ${now.toISOString()}::timestamptz then ${artifacts.lockedAt} else ${now.toISOString()}::timestamptz end`,
        lockExpiresAt: lockExpiry(now, config.lockTtlSeconds),
      })
      .where(
        and(
          artifactWhere(spaceId, artifactId),
          or(isNull(artifacts.lockedBy), lte(artifacts.lockExpiresAt, now), eq(artifacts.lockedBy, me)),
        ),
      )
      .returning();
    if (!row) throw await lockedError(tx, await findArtifact(tx, spaceId, artifactId), now);

    const held = activeLock(before, now);
    if (before.lockedBy && !held) {
      const lapsed = { ...before, lockedBy: null, lockedAt: null, lockExpiresAt: null };
      await appendEvent(tx, deps, spaceId, 'artifact-unlocked', toArtifactSummary(lapsed, now));
    }
    if (held?.lockedBy !== me) {
      await appendEvent(tx, deps, spaceId, 'artifact-locked', toArtifactSummary(row, now));
    }
    return toLockResult(row);
  });
}
