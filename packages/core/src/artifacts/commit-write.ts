import type { TArtifactView } from '@convene/contract';
import { and, eq, gt, sql } from 'drizzle-orm';
import type { Caller } from '../auth/authorize';
import { artifacts, artifactVersions } from '../db/schema';
import type { Tx } from '../db/types';
import type { Deps } from '../deps';
import { ConflictError } from '../errors';
import { appendEvent } from '../events/append-event';
import { toArtifactSummary } from '../spaces/views';
import {
  artifactWhere,
  findArtifact,
  lockExpiry,
  lockedError,
  requireArtifactId,
  toArtifactView,
} from './shared';
import { chargeArtifactStorage } from './storage';

export interface CommitWriteOptions {
  deps: Deps;
  tx: Tx;
  spaceId: string;
  artifactId: string;
  caller: Caller & { role: 'owner' | 'participant' };
  content: string;
  /** Refuse with 409 unless this is still the current version. */
  baseVersion?: number | undefined;
}

/**
 * A write (writeArtifact, restoreArtifactVersion) inside the caller's transaction: one
 * conditional UPDATE that only matches while the caller holds an unexpired lock (and, if asked,
 * while the version is still `baseVersion`), bumping the version by exactly one and refreshing
 * the lock; then the history row and the `artifact-updated` event. Nothing changes otherwise.
 */
export async function commitWrite({
  deps,
  tx,
  spaceId,
  artifactId,
  caller,
  content,
  baseVersion,
}: CommitWriteOptions): Promise<TArtifactView> {
  const { clock, config } = deps;
  const now = clock.now();
  const me = caller.participant.id;
  requireArtifactId(artifactId);
  const [row] = await tx
    .update(artifacts)
    .set({
      content,
      version: sql`${artifacts.version} + 1`,
      updatedBy: me,
      updatedAt: now,
      lockExpiresAt: lockExpiry(now, config.lockTtlSeconds),
    })
    .where(
      and(
        artifactWhere(spaceId, artifactId),
        eq(artifacts.lockedBy, me),
        gt(artifacts.lockExpiresAt, now),
        baseVersion === undefined ? undefined : eq(artifacts.version, baseVersion),
      ),
    )
    .returning();
  if (!row) {
    // Diagnose from the row as it stands: the lock first (423), then the version (409).
    const latest = await findArtifact(tx, spaceId, artifactId);
    if (latest.lockedBy !== me || !latest.lockExpiresAt || latest.lockExpiresAt <= now) {
      throw await lockedError(tx, latest, now);
    }
    throw new ConflictError(
      `baseVersion ${baseVersion} is not the current version ${latest.version}; nothing was written`,
      { version: latest.version },
      'version_conflict',
    );
  }
  await chargeArtifactStorage(tx, spaceId, content);
  await tx.insert(artifactVersions).values({
    spaceId,
    artifactId,
    version: row.version,
    content,
    updatedBy: me,
    updatedAt: now,
  });
  await appendEvent(tx, deps, spaceId, 'artifact-updated', toArtifactSummary(row, now));
  return toArtifactView(row, now);
}
