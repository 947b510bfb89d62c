import { limits, type TArtifactList } from '@convene/contract';
import { asc, eq, getTableColumns, sql } from 'drizzle-orm';
import { authorize, roles } from '../auth/authorize';
import { artifacts } from '../db/schema';
import type { Deps } from '../deps';
import { toArtifactView } from './shared';

export interface ListArtifactsOptions {
  deps: Deps;
  spaceId: string;
  key: string | undefined;
}

/**
 * Every artifact of the space, oldest first; muted participants read too. Each comes with its
 * content while the content before it stays under limits.artifactListBytes (so the first always
 * does); after that, with `contentOmitted` instead: a space may hold 256 MiB of documents, which no
 * one answer can carry (nor its reader), and which the database does not even send here.
 */
export async function listArtifacts({ deps, spaceId, key }: ListArtifactsOptions): Promise<TArtifactList> {
  const { db, clock } = deps;
  await authorize(db, clock, { spaceId, key, allow: roles.member, whenClosed: 'unauthorized' });
  const size = sql`octet_length(${artifacts.content})`;
  const rows = await db
    .select({
      ...getTableColumns(artifacts),
      content: sql<
        string | null
      >`case when sum(${size}) over (order by ${artifacts.createdAt}, ${artifacts.id}) - ${size} < ${limits.artifactListBytes} then ${artifacts.content} end`,
    })
    .from(artifacts)
    .where(eq(artifacts.spaceId, spaceId))
    .orderBy(asc(artifacts.createdAt), asc(artifacts.id));
  const now = clock.now();
  return {
    artifacts: rows.map(({ content, ...row }) =>
      content === null
        ? { ...toArtifactView({ ...row, content: '' }, now), contentOmitted: true as const }
        : toArtifactView({ ...row, content }, now),
    ),
  };
}
