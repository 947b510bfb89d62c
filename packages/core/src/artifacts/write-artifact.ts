import type { TArtifactView, TWriteArtifactRequest } from '@convene/contract';
import { roles, whenClosedOf } from '../auth/authorize';
import type { Deps } from '../deps';
import { commitWrite } from './commit-write';
import { authorizeForUpdate } from './shared';

export interface WriteArtifactOptions {
  deps: Deps;
  spaceId: string;
  artifactId: string;
  key: string | undefined;
  input: TWriteArtifactRequest;
}

/**
 * The lock holder overwrites the content (muted holders too): version + 1, lock refreshed,
 * history kept. Anyone else gets 423; a stale `baseVersion` gets 409 `{error, version}`.
 */
export async function writeArtifact({
  deps,
  spaceId,
  artifactId,
  key,
  input,
}: WriteArtifactOptions): Promise<TArtifactView> {
  return deps.db.transaction(async (tx) => {
    const { caller } = await authorizeForUpdate(tx, deps.clock, {
      spaceId,
      key,
      allow: roles.member,
      whenClosed: whenClosedOf.writeArtifact,
    });
    return commitWrite({
      deps,
      tx,
      spaceId,
      artifactId,
      caller,
      content: input.content,
      baseVersion: input.baseVersion,
    });
  });
}
