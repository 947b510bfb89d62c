import type { TOk, TUpdateSpaceBody } from '@convene/contract';
import { eq } from 'drizzle-orm';
import { authorize, roles, whenClosedOf } from '../auth/authorize';
import { spaces } from '../db/schema';
import type { Deps } from '../deps';

export interface UpdateSpaceOptions {
  deps: Deps;
  spaceId: string;
  key: string | undefined;
  /** Only the fields present change; an empty update is a successful no-op. */
  input: TUpdateSpaceBody;
}

/**
 * The owner renames the space, rewrites its description or agenda, or sets (null: removes) the
 * budget of messages each participant may send per minute.
 */
export async function updateSpace({ deps, spaceId, key, input }: UpdateSpaceOptions): Promise<TOk> {
  const { db, clock } = deps;
  const changes = {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.agenda !== undefined ? { agenda: input.agenda } : {}),
    ...(input.maxMessagesPerMinute !== undefined ? { maxMessagesPerMinute: input.maxMessagesPerMinute } : {}),
  };
  await db.transaction(async (tx) => {
    await authorize(tx, clock, { spaceId, key, allow: roles.owner, whenClosed: whenClosedOf.updateSpace });
    if (Object.keys(changes).length > 0) await tx.update(spaces).set(changes).where(eq(spaces.id, spaceId));
  });
  return { ok: true };
}
