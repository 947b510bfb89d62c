import { and, eq, inArray, isNotNull, isNull, lt, lte } from 'drizzle-orm';
import { apiTokens, linkRequests } from '../db/schema';
import type { Executor } from '../db/types';

export type LinkRequestRow = typeof linkRequests.$inferSelect;

/** How long finished or expired link requests are kept before they are deleted. */
const RETAIN_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Housekeeping of the link flow: a token approved but never collected before its request expired
 * is held by nobody, so it is revoked and its sealed copy dropped; long-dead requests are deleted.
 */
export async function sweepExpiredLinks(ex: Executor, now: Date): Promise<void> {
  const abandoned = await ex
    .update(linkRequests)
    .set({ tokenEnc: null })
    .where(
      and(
        eq(linkRequests.status, 'approved'),
        isNotNull(linkRequests.tokenEnc),
        lte(linkRequests.expiresAt, now),
      ),
    )
    .returning({ tokenId: linkRequests.tokenId });
  const tokenIds = abandoned.map((r) => r.tokenId).filter((id): id is string => id !== null);
  if (tokenIds.length > 0) {
    await ex
      .update(apiTokens)
      .set({ revokedAt: now })
      .where(and(inArray(apiTokens.id, tokenIds), isNull(apiTokens.revokedAt)));
  }
  await ex.delete(linkRequests).where(lt(linkRequests.expiresAt, new Date(now.getTime() - RETAIN_MS)));
}
