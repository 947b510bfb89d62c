import { and, eq } from 'drizzle-orm';
import { artifactVersions } from '../db/schema';
import type { Executor } from '../db/types';
import { NotFoundError } from '../errors';
import { parseVersion } from './shared';

export type ArtifactVersionRow = typeof artifactVersions.$inferSelect;

/** One stored version, or 404 when the artifact has no such version (or the segment is no number). */
export async function findVersion(
  ex: Executor,
  spaceId: string,
  artifactId: string,
  version: string | number,
): Promise<ArtifactVersionRow> {
  const number = typeof version === 'number' ? version : parseVersion(version);
  const [row] =
    number === null
      ? []
      : await ex
          .select()
          .from(artifactVersions)
          .where(
            and(
              eq(artifactVersions.spaceId, spaceId),
              eq(artifactVersions.artifactId, artifactId),
              eq(artifactVersions.version, number),
            ),
          );
  if (!row) throw new NotFoundError(`version ${version} of this artifact`);
  return row;
}
