import { limits, type TArtifactView, type TCreateArtifactRequest } from '@convene/contract';
import { count, eq } from 'drizzle-orm';
import { roles, whenClosedOf } from '../auth/authorize';
import { artifacts, artifactVersions } from '../db/schema';
import type { Deps } from '../deps';
import { LimitReachedError } from '../errors';
import { appendEvent } from '../events/append-event';
import { newId } from '../ids';
import { toArtifactSummary } from '../spaces/views';
import { authorizeForUpdate, refuseMuted, toArtifactView } from './shared';
import { chargeArtifactStorage } from './storage';

export interface CreateArtifactOptions {
  deps: Deps;
  spaceId: string;
  key: string | undefined;
  input: TCreateArtifactRequest;
}

/**
 * Owner or active participant: creates a markdown artifact at version 1 (kept in history like
 * every later version), unlocked, and announces `artifact-created`.
 */
export async function createArtifact({
  deps,
  spaceId,
  key,
  input,
}: CreateArtifactOptions): Promise<TArtifactView> {
  const { db, clock } = deps;
  return db.transaction(async (tx) => {
    const { caller } = await authorizeForUpdate(tx, clock, {
      spaceId,
      key,
      allow: roles.member,
      whenClosed: whenClosedOf.createArtifact,
    });
    refuseMuted(caller, 'create artifacts');
    // Counted under the space row's lock, so concurrent creators cannot overshoot the limit.
    const [existing] = await tx.select({ n: count() }).from(artifacts).where(eq(artifacts.spaceId, spaceId));
    if ((existing?.n ?? 0) >= limits.artifactsPerSpace) {
      throw new LimitReachedError(`a space holds at most ${limits.artifactsPerSpace} artifacts`);
    }
    await chargeArtifactStorage(tx, spaceId, input.content);
    const now = clock.now();
    const me = caller.participant.id;
    const [row] = await tx
      .insert(artifacts)
      .values({
        spaceId,
        id: newId(),
        name: input.name,
        type: input.type,
        content: input.content,
        version: 1,
        createdBy: me,
        updatedBy: me,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    if (!row) throw new Error('insert returned no artifact');
    await tx.insert(artifactVersions).values({
      spaceId,
      artifactId: row.id,
      version: 1,
      content: row.content,
      updatedBy: me,
      updatedAt: now,
    });
    await appendEvent(tx, deps, spaceId, 'artifact-created', toArtifactSummary(row, now));
    return toArtifactView(row, now);
  });
}
