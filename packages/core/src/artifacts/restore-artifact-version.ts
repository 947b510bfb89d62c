import type { TArtifactView } from '@convene/contract';
import { roles, whenClosedOf } from '../auth/authorize';
import type { Deps } from '../deps';
import { commitWrite } from './commit-write';
import { authorizeForUpdate, findArtifact } from './shared';
import { findVersion } from './versions';

export interface RestoreArtifactVersionOptions {
  deps: Deps;
  spaceId: string;
  artifactId: string;
  version: string;
  key: string | undefined;
}

/**
 * Writes an old version's content as a new version: a write like any other, so only the lock
 * holder may do it (423 otherwise), and history keeps both the old and the restored version.
 */
export async function restoreArtifactVersion({
  deps,
  spaceId,
  artifactId,
  version,
  key,
}: RestoreArtifactVersionOptions): Promise<TArtifactView> {
  return deps.db.transaction(async (tx) => {
    const { caller } = await authorizeForUpdate(tx, deps.clock, {
      spaceId,
      key,
      allow: roles.member,
      whenClosed: whenClosedOf.restoreArtifactVersion,
    });
    await findArtifact(tx, spaceId, artifactId);
    const old = await findVersion(tx, spaceId, artifactId, version);
    return commitWrite({ deps, tx, spaceId, artifactId, caller, content: old.content });
  });
}
