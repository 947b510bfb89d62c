import type { TOk } from '@convene/contract';
import { authorize, roles, whenClosedOf } from '../auth/authorize';
import type { Deps } from '../deps';
import { lockModerationTarget, notApplicable, transitionParticipant } from './moderation';

export interface KickParticipantOptions {
  deps: Deps;
  spaceId: string;
  participantId: string;
  key: string | undefined;
}

/**
 * The owner removes a live participant (waiting, active or muted): its key stops working at
 * once and its edit locks are released. Kicking a waiting joiner is how a join is refused.
 */
export async function kickParticipant({
  deps,
  spaceId,
  participantId,
  key,
}: KickParticipantOptions): Promise<TOk> {
  const { db, clock, config } = deps;
  await db.transaction(async (tx) => {
    await authorize(tx, clock, {
      spaceId,
      key,
      allow: roles.owner,
      whenClosed: whenClosedOf.kickParticipant,
    });
    const row = await lockModerationTarget(tx, spaceId, participantId);
    if (row.status === 'left' || row.status === 'kicked') throw notApplicable('kick', row.status);
    await transitionParticipant({ ex: tx, clock, events: deps.events, config, row, to: 'kicked' });
  });
  return { ok: true };
}
