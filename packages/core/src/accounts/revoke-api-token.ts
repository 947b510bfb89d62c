import { and, eq, sql } from 'drizzle-orm';
import { apiTokens } from '../db/schema';
import type { Deps } from '../deps';
import { NotFoundError } from '../errors';
import { isUuid } from '../ids';
import { authenticateHuman } from './authenticate-human';

export interface RevokeApiTokenOptions {
  deps: Deps;
  bearer: string | undefined;
  tokenId: string;
}

/**
 * Revokes one of this human's tokens. Every use of a token reads the database, so the token stops
 * working at once on every node. Another human's token is as unknown as a missing one (404).
 * Revoking an already revoked token succeeds again and keeps the first revocation time.
 */
export async function revokeApiToken({ deps, bearer, tokenId }: RevokeApiTokenOptions): Promise<void> {
  const user = await authenticateHuman(deps, bearer);
  if (!isUuid(tokenId)) throw new NotFoundError('token');
  const [row] = await deps.db
    .update(apiTokens)
    .set({ revokedAt: sql`coalesce(${apiTokens.revokedAt}, ${deps.clock.now().toISOString()}::timestamptz)` })
    .where(and(eq(apiTokens.id, tokenId), eq(apiTokens.userId, user.id)))
    .returning({ id: apiTokens.id });
  if (!row) throw new NotFoundError('token');
}
