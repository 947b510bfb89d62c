import type { TKickParticipantInput, TOk } from '@convene/contract';
import { authorize, roles, whenClosedOf } from '../auth/authorize';
import type { Deps } from '../deps';
import { lockModerationTarget, notApplicable, transitionParticipant } from './moderation';

export interface KickParticipantOptions {
  deps: Deps;
  spaceId: string;
  participantId: string;
  key: string | undefined;
  /** Kick only a participant with this status (`waitingForApproval`: refuse a join), else 409. */
  ifStatus?: TKickParticipantInput['ifStatus'];
}

/**
 * The owner removes a live participant (waiting, active or muted): its key stops working at
 * once and its edit locks are released. Kicking a waiting joiner is how a join is refused; with
 * `ifStatus: 'waitingForApproval'` only that: the status is read under the row's lock, so a joiner
 * approved meanwhile (by another process of the owner, after the read that chose to refuse them)
 * is answered 409 and stays, where the kick would have removed them.
 */
export async function kickParticipant({
  deps,
  spaceId,
  participantId,
  key,
  ifStatus,
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
    // Named as the caller asked: a refusal (`ifStatus`) of someone refused already is no kick.
    const action = ifStatus ? 'refuse' : 'kick';
    if (row.status === 'left' || row.status === 'kicked') throw notApplicable(action, row.status);
    if (ifStatus && row.status !== ifStatus) throw notApplicable(action, row.status);
    await transitionParticipant({ ex: tx, clock, events: deps.events, config, row, to: 'kicked' });
  });
  return { ok: true };
}
