import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Clock } from '../clock';
import { apiTokens } from '../db/schema';
import type { Executor } from '../db/types';
import { hashSecret } from '../secrets';

/**
 * The human a `usr_` token names, or null. Unknown, malformed, revoked and expired tokens are null: where
 * X-User-Token is optional (createSpace, joinSpace) an invalid one is silently ignored.
 * Revocation is read from the database on every use, so it is immediate on every node.
 */
export async function resolveUserToken(
  ex: Executor,
  clock: Clock,
  token: string | undefined,
): Promise<string | null> {
  if (!token?.startsWith('usr_')) return null;
  const now = clock.now();
  const [row] = await ex
    .update(apiTokens)
    .set({ lastUsedAt: now })
    .where(
      and(
        eq(apiTokens.tokenHash, hashSecret(token)),
        isNull(apiTokens.revokedAt),
        gt(apiTokens.expiresAt, now),
      ),
    )
    .returning({ userId: apiTokens.userId });
  return row?.userId ?? null;
}
