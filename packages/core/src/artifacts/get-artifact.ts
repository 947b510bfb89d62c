import type { TArtifactView } from '@convene/contract';
import { authorize, roles } from '../auth/authorize';
import type { Deps } from '../deps';
import { findArtifact, toArtifactView } from './shared';

export interface GetArtifactOptions {
  deps: Deps;
  spaceId: string;
  artifactId: string;
  key: string | undefined;
}

/** One artifact with its full content (also what downloadArtifact serves as markdown). */
export async function getArtifact({
  deps,
  spaceId,
  artifactId,
  key,
}: GetArtifactOptions): Promise<TArtifactView> {
  const { db, clock } = deps;
  await authorize(db, clock, { spaceId, key, allow: roles.member, whenClosed: 'unauthorized' });
  const row = await findArtifact(db, spaceId, artifactId);
  return toArtifactView(row, clock.now());
}
