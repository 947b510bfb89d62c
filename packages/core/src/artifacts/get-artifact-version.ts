import type { TArtifactView } from '@convene/contract';
import { authorize, roles } from '../auth/authorize';
import type { Deps } from '../deps';
import { findArtifact } from './shared';
import { findVersion } from './versions';

export interface GetArtifactVersionOptions {
  deps: Deps;
  spaceId: string;
  artifactId: string;
  /** The path segment; anything but a version number that exists is 404. */
  version: string;
  key: string | undefined;
}

/** The artifact as it was at one version: that version's content, author and time; no lock fields. */
export async function getArtifactVersion({
  deps,
  spaceId,
  artifactId,
  version,
  key,
}: GetArtifactVersionOptions): Promise<TArtifactView> {
  const { db, clock } = deps;
  await authorize(db, clock, { spaceId, key, allow: roles.member, whenClosed: 'unauthorized' });
  const artifact = await findArtifact(db, spaceId, artifactId);
  const found = await findVersion(db, spaceId, artifactId, version);
  return {
    id: artifact.id,
    spaceId: artifact.spaceId,
    name: artifact.name,
    type: artifact.type,
    content: found.content,
    version: found.version,
    createdBy: artifact.createdBy,
    updatedBy: found.updatedBy,
    createdAt: artifact.createdAt.toISOString(),
    updatedAt: found.updatedAt.toISOString(),
  };
}
