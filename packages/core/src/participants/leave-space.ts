import type { TOk } from '@convene/contract';
import { and, eq } from 'drizzle-orm';
import { authorize, departedKeyError, departureOf, roles, whenClosedOf } from '../auth/authorize';
import { participants } from '../db/schema';
import type { Deps } from '../deps';
import { ConflictError, UnauthorizedError } from '../errors';
import { transitionParticipant } from './moderation';

export interface LeaveSpaceOptions {
  deps: Deps;
  spaceId: string;
  key: string | undefined;
}

/**
 * A participant (active or muted) leaves: its key stops working and its edit locks are
 * released. The owner cannot leave its own space; it closes it instead.
 */
export async function leaveSpace({ deps, spaceId, key }: LeaveSpaceOptions): Promise<TOk> {
  const { db, clock, config } = deps;
  await db.transaction(async (tx) => {
    const { caller } = await authorize(tx, clock, {
      spaceId,
      key,
      allow: roles.member,
      whenClosed: whenClosedOf.leaveSpace,
    });
    if (caller.role === 'owner') {
      throw new ConflictError('the owner cannot leave the space; close it instead');
    }
    if (!caller.participant) throw new UnauthorizedError();
    // Re-read under a row lock: a kick racing this leave is applied first or not at all.
    const [row] = await tx
      .select()
      .from(participants)
      .where(and(eq(participants.spaceId, spaceId), eq(participants.id, caller.participant.id)))
      .for('update');
    if (!row || (row.status !== 'active' && row.status !== 'muted')) {
      throw departedKeyError(departureOf(row) ?? 'kicked');
    }
    await transitionParticipant({ ex: tx, clock, events: deps.events, config, row, to: 'left' });
  });
  return { ok: true };
}
