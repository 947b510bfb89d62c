import { and, eq } from 'drizzle-orm';
import { releaseLocks } from '../artifacts/release-locks';
import type { ParticipantRow } from '../auth/authorize';
import type { Clock } from '../clock';
import { participants, spaces } from '../db/schema';
import type { Executor } from '../db/types';
import type { CoreConfig } from '../deps';
import { ConflictError, NotFoundError, SpaceClosedError } from '../errors';
import { appendEvent } from '../events/append-event';
import type { EventBus } from '../events/event-bus';
import { isUuid } from '../ids';
import { isClosed, isExpired, toParticipantView } from '../spaces/views';

type ParticipantStatus = ParticipantRow['status'];

/**
 * The participant a moderation names, locked for the rest of the transaction so that two
 * moderations of one participant apply one after the other. Unknown (or non-UUID) ids are 404;
 * the owner cannot be moderated (409).
 */
export async function lockModerationTarget(
  ex: Executor,
  spaceId: string,
  participantId: string,
): Promise<ParticipantRow> {
  if (!isUuid(participantId)) throw new NotFoundError('participant');
  const [row] = await ex
    .select()
    .from(participants)
    .where(and(eq(participants.spaceId, spaceId), eq(participants.id, participantId)))
    .for('update');
  if (!row) throw new NotFoundError('participant');
  if (row.isOwner) throw new ConflictError('the owner cannot be moderated');
  return row;
}

export interface TransitionOptions {
  ex: Executor;
  clock: Clock;
  events: EventBus;
  config: CoreConfig;
  row: ParticipantRow;
  to: ParticipantStatus;
  /** Extra columns to write with the status (e.g. clearing the join-status ticket). */
  also?: Partial<Pick<ParticipantRow, 'keyEnc' | 'invitationId'>>;
}

/**
 * Writes a participant's new status and announces it on the stream in the same transaction.
 * Leaving and being kicked also release the participant's edit locks.
 */
export async function transitionParticipant({
  ex,
  clock,
  events,
  config,
  row,
  to,
  also = {},
}: TransitionOptions): Promise<ParticipantRow> {
  const now = clock.now();
  // The space row, locked as the event it appends will lock it, and looked at again: a close
  // that committed while this transaction waited for it ends the space first (authorize read it
  // before, unlocked). Without it a mute, kick or leave racing a close was answered 200 and its
  // event committed after `space-closed`, where no stream reads it.
  const [space] = await ex
    .select({ state: spaces.state, expiresAt: spaces.expiresAt })
    .from(spaces)
    .where(eq(spaces.id, row.spaceId))
    .for('no key update');
  if (!space) throw new NotFoundError('space');
  if (isClosed(space, now)) throw new SpaceClosedError(space.state !== 'closed' && isExpired(space, now));
  const [updated] = await ex
    .update(participants)
    .set({ status: to, updatedAt: now, ...also })
    .where(and(eq(participants.spaceId, row.spaceId), eq(participants.id, row.id)))
    .returning();
  if (!updated) throw new NotFoundError('participant');
  if (to === 'kicked' || to === 'left') await releaseLocks(ex, { clock, events }, row.spaceId, row.id);
  await appendEvent(
    ex,
    { clock, events },
    row.spaceId,
    'participant-status',
    toParticipantView(config, updated),
  );
  return updated;
}

/** The 409 of a moderation whose participant is not in a state it applies to. */
export function notApplicable(action: string, status: ParticipantStatus): ConflictError {
  const state: Record<ParticipantStatus, string> = {
    waitingForApproval: 'is waiting for approval',
    active: 'is already active',
    muted: 'is muted',
    left: 'has left the space',
    kicked: 'was kicked',
  };
  return new ConflictError(
    `cannot ${action} a participant who ${state[status]}`,
    // Not `status`: beside an answer's HTTP status (MCP's `_meta`, a client's error object) it
    // would name the wrong thing, and be overwritten.
    { participantStatus: status },
    'participant_status_conflict',
  );
}
