import type { TLockResult } from '@convene/contract';
import { and, eq, gt } from 'drizzle-orm';
import { authorize, roles, whenClosedOf } from '../auth/authorize';
import { artifacts } from '../db/schema';
import type { Deps } from '../deps';
import {
  artifactWhere,
  asMember,
  findArtifact,
  lockExpiry,
  lockedError,
  requireArtifactId,
  toLockResult,
} from './shared';

export interface HeartbeatArtifactLockOptions {
  deps: Deps;
  spaceId: string;
  artifactId: string;
  key: string | undefined;
}

/**
 * The holder (muted or not) extends an unexpired lock by `lockTtlSeconds` without writing. One
 * conditional UPDATE; a lapsed lock cannot be revived this way (423), only taken again. It
 * announces nothing: the holder does not change.
 */
export async function heartbeatArtifactLock({
  deps,
  spaceId,
  artifactId,
  key,
}: HeartbeatArtifactLockOptions): Promise<TLockResult> {
  const { db, clock, config } = deps;
  const { caller } = asMember(
    await authorize(db, clock, {
      spaceId,
      key,
      allow: roles.member,
      whenClosed: whenClosedOf.heartbeatArtifactLock,
    }),
  );
  requireArtifactId(artifactId);
  const me = caller.participant.id;
  const now = clock.now();
  const [row] = await db
    .update(artifacts)
    .set({ lockExpiresAt: lockExpiry(now, config.lockTtlSeconds) })
    .where(
      and(artifactWhere(spaceId, artifactId), eq(artifacts.lockedBy, me), gt(artifacts.lockExpiresAt, now)),
    )
    .returning();
  if (!row) throw await lockedError(db, await findArtifact(db, spaceId, artifactId), now);
  return toLockResult(row);
}
