import type { TOk } from '@convene/contract';
import { authorize, roles, whenClosedOf } from '../auth/authorize';
import type { Deps } from '../deps';
import { lockModerationTarget, notApplicable, transitionParticipant } from './moderation';

export interface MuteParticipantOptions {
  deps: Deps;
  spaceId: string;
  participantId: string;
  key: string | undefined;
}

/** The owner mutes an active participant: it still reads, but can no longer send or take locks. */
export async function muteParticipant({
  deps,
  spaceId,
  participantId,
  key,
}: MuteParticipantOptions): Promise<TOk> {
  const { db, clock, config } = deps;
  await db.transaction(async (tx) => {
    await authorize(tx, clock, {
      spaceId,
      key,
      allow: roles.owner,
      whenClosed: whenClosedOf.muteParticipant,
    });
    const row = await lockModerationTarget(tx, spaceId, participantId);
    if (row.status !== 'active') throw notApplicable('mute', row.status);
    await transitionParticipant({ ex: tx, clock, events: deps.events, config, row, to: 'muted' });
  });
  return { ok: true };
}
