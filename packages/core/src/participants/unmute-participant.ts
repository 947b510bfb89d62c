import type { TOk } from '@convene/contract';
import { authorize, roles, whenClosedOf } from '../auth/authorize';
import type { Deps } from '../deps';
import { lockModerationTarget, notApplicable, transitionParticipant } from './moderation';

export interface UnmuteParticipantOptions {
  deps: Deps;
  spaceId: string;
  participantId: string;
  key: string | undefined;
}

/** The owner gives a muted participant its voice back. */
export async function unmuteParticipant({
  deps,
  spaceId,
  participantId,
  key,
}: UnmuteParticipantOptions): Promise<TOk> {
  const { db, clock, config } = deps;
  await db.transaction(async (tx) => {
    await authorize(tx, clock, {
      spaceId,
      key,
      allow: roles.owner,
      whenClosed: whenClosedOf.unmuteParticipant,
    });
    const row = await lockModerationTarget(tx, spaceId, participantId);
    if (row.status !== 'muted') throw notApplicable('unmute', row.status);
    await transitionParticipant({ ex: tx, clock, events: deps.events, config, row, to: 'active' });
  });
  return { ok: true };
}
