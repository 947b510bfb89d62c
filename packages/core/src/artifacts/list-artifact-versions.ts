import type { TArtifactVersionList } from '@convene/contract';
import { and, desc, eq, sql } from 'drizzle-orm';
import { authorize, roles } from '../auth/authorize';
import { artifactVersions } from '../db/schema';
import type { Deps } from '../deps';
import { NotFoundError } from '../errors';
import { requireArtifactId } from './shared';

export interface ListArtifactVersionsOptions {
  deps: Deps;
  spaceId: string;
  artifactId: string;
  key: string | undefined;
}

/** Every version of an artifact, newest first, with its author, time and UTF-8 size. */
export async function listArtifactVersions({
  deps,
  spaceId,
  artifactId,
  key,
}: ListArtifactVersionsOptions): Promise<TArtifactVersionList> {
  const { db, clock } = deps;
  await authorize(db, clock, { spaceId, key, allow: roles.member, whenClosed: 'unauthorized' });
  requireArtifactId(artifactId);
  const rows = await db
    .select({
      version: artifactVersions.version,
      updatedBy: artifactVersions.updatedBy,
      updatedAt: artifactVersions.updatedAt,
      // The database's text is UTF-8 on both engines, so this is the UTF-8 byte count.
      size: sql<number>`octet_length(${artifactVersions.content})`.mapWith(Number),
    })
    .from(artifactVersions)
    .where(and(eq(artifactVersions.spaceId, spaceId), eq(artifactVersions.artifactId, artifactId)))
    .orderBy(desc(artifactVersions.version));
  // Version 1 is written with the artifact itself: no versions means no artifact.
  if (rows.length === 0) throw new NotFoundError('artifact');
  return {
    versions: rows.map((r) => ({
      version: r.version,
      updatedBy: r.updatedBy,
      updatedAt: r.updatedAt.toISOString(),
      size: r.size,
    })),
  };
}
