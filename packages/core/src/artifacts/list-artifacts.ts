import type { TArtifactList } from '@convene/contract';
import { asc, eq } from 'drizzle-orm';
import { authorize, roles } from '../auth/authorize';
import { artifacts } from '../db/schema';
import type { Deps } from '../deps';
import { toArtifactView } from './shared';

export interface ListArtifactsOptions {
  deps: Deps;
  spaceId: string;
  key: string | undefined;
}

/** Every artifact of the space with its content, oldest first; muted participants read too. */
export async function listArtifacts({ deps, spaceId, key }: ListArtifactsOptions): Promise<TArtifactList> {
  const { db, clock } = deps;
  await authorize(db, clock, { spaceId, key, allow: roles.member, whenClosed: 'unauthorized' });
  const rows = await db
    .select()
    .from(artifacts)
    .where(eq(artifacts.spaceId, spaceId))
    .orderBy(asc(artifacts.createdAt), asc(artifacts.id));
  const now = clock.now();
  return { artifacts: rows.map((row) => toArtifactView(row, now)) };
}
