import type { TOk } from '@convene/contract';
import { and, eq } from 'drizzle-orm';
import { releaseLocks } from '../artifacts/release-locks';
import { authorize, roles, whenClosedOf } from '../auth/authorize';
import { spaces } from '../db/schema';
import type { Deps } from '../deps';
import { SpaceClosedError } from '../errors';
import { appendEvent } from '../events/append-event';

export interface CloseSpaceOptions {
  deps: Deps;
  spaceId: string;
  key: string | undefined;
}

/**
 * The owner closes the space for good: every key stops working, every edit lock is released,
 * and open streams receive `space-closed` with reason `closed`. Closing a closed (or expired)
 * space is a conflict.
 */
export async function closeSpace({ deps, spaceId, key }: CloseSpaceOptions): Promise<TOk> {
  const { db, clock } = deps;
  await db.transaction(async (tx) => {
    await authorize(tx, clock, { spaceId, key, allow: roles.owner, whenClosed: whenClosedOf.closeSpace });
    // releaseLocks takes the space row, then the artifact rows: the order artifact writers use,
    // so a close never deadlocks with them, and a lock taken just before is seen and released.
    await releaseLocks(tx, deps, spaceId, null);
    const now = clock.now();
    const [closed] = await tx
      .update(spaces)
      .set({ state: 'closed', closedAt: now })
      .where(and(eq(spaces.id, spaceId), eq(spaces.state, 'open')))
      .returning({ id: spaces.id });
    // A concurrent close won the race.
    if (!closed) throw new SpaceClosedError();
    await appendEvent(tx, deps, spaceId, 'space-closed', { spaceId, reason: 'closed' });
  });
  return { ok: true };
}
