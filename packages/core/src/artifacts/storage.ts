import { limits } from '@convene/contract';
import { and, eq, sql } from 'drizzle-orm';
import { spaces } from '../db/schema';
import type { Executor } from '../db/types';
import { LimitReachedError } from '../errors';

/**
 * Counts a new version's content against its space's artifact storage, or refuses the write with
 * 409 (its transaction then changes nothing). Every version is kept, so without a bound one
 * participant could grow a space's history without end.
 */
export async function chargeArtifactStorage(ex: Executor, spaceId: string, content: string): Promise<void> {
  const bytes = Buffer.byteLength(content);
  const [row] = await ex
    .update(spaces)
    .set({ artifactBytes: sql`${spaces.artifactBytes} + ${bytes}` })
    .where(
      and(eq(spaces.id, spaceId), sql`${spaces.artifactBytes} + ${bytes} <= ${limits.artifactBytesPerSpace}`),
    )
    .returning({ id: spaces.id });
  if (!row)
    throw new LimitReachedError(
      `this space stores at most ${limits.artifactBytesPerSpace} bytes of artifact content, every version counted; nothing was written`,
    );
}
