import type { TOk } from '@convene/contract';
import { authorize, roles, whenClosedOf } from '../auth/authorize';
import type { Deps } from '../deps';
import { lockModerationTarget, notApplicable, transitionParticipant } from './moderation';

export interface ApproveParticipantOptions {
  deps: Deps;
  spaceId: string;
  participantId: string;
  key: string | undefined;
}

/**
 * The owner admits a joiner of a private space: waitingForApproval becomes active, and the
 * joiner's next join-status poll collects the key minted at join.
 */
export async function approveParticipant({
  deps,
  spaceId,
  participantId,
  key,
}: ApproveParticipantOptions): Promise<TOk> {
  const { db, clock, config } = deps;
  await db.transaction(async (tx) => {
    await authorize(tx, clock, {
      spaceId,
      key,
      allow: roles.owner,
      whenClosed: whenClosedOf.approveParticipant,
    });
    const row = await lockModerationTarget(tx, spaceId, participantId);
    if (row.status !== 'waitingForApproval') throw notApplicable('approve', row.status);
    await transitionParticipant({ ex: tx, clock, events: deps.events, config, row, to: 'active' });
  });
  return { ok: true };
}
