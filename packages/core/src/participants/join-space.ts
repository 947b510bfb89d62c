import { limits, type TJoinRequest, type TJoinResult } from '@convene/contract';
import { and, count, eq, sql } from 'drizzle-orm';
import { resolveUserToken } from '../accounts/resolve-user-token';
import { authorize, roles, whenClosedOf } from '../auth/authorize';
import { invitations, participants, spaceColumns, spaces } from '../db/schema';
import type { Deps } from '../deps';
import { LimitReachedError, SpaceClosedError } from '../errors';
import { appendEvent } from '../events/append-event';
import { newId } from '../ids';
import { hashSecret, mintPollToken, mintSpaceKey } from '../secrets';
import { isClosed, isExpired, toParticipantView } from '../spaces/views';
import { participantName } from './name';

export interface JoinSpaceOptions {
  deps: Deps;
  spaceId: string;
  /** The publicInvitationKey. */
  key: string | undefined;
  input: TJoinRequest;
  /** Optional X-User-Token: a valid one links the participant to its human; invalid ones are ignored. */
  userToken?: string | undefined;
}

/** What the caller answers: the body, and whether the join waits for approval (202). */
export interface JoinSpaceOutcome {
  result: TJoinResult;
  pending: boolean;
}

/** The URL a waiting joiner polls; also the 202's Location. */
export const joinStatusUrl = (publicUrl: string, spaceId: string, participantId: string): string =>
  `${publicUrl}/hub/space/${spaceId}/join/${participantId}`;

/**
 * Joining with an invitation key. A public space admits the joiner at once and returns its key;
 * a private one records it as waitingForApproval and returns the poll URL and a pollToken. Either
 * way the key is minted now: a waiting joiner's key is kept encrypted (and tied to the invitation
 * it came through and to the pollToken's hash) until a join-status poll presenting both collects
 * it, and for JOIN_KEY_WINDOW_MS after, for a joiner whose answer was lost.
 */
export async function joinSpace({
  deps,
  spaceId,
  key,
  input,
  userToken,
}: JoinSpaceOptions): Promise<JoinSpaceOutcome> {
  const { db, clock, config, box } = deps;
  const participantId = newId();
  const participantPrivateKey = mintSpaceKey();
  const pollToken = mintPollToken();
  const outcome = await db.transaction(async (tx) => {
    const { caller } = await authorize(tx, clock, {
      spaceId,
      key,
      allow: roles.invitation,
      whenClosed: whenClosedOf.joinSpace,
    });
    // The space row lock serialises joins, so the participant limit cannot be overshot, and
    // orders this join against a concurrent close.
    const [space] = await tx.select(spaceColumns).from(spaces).where(eq(spaces.id, spaceId)).for('update');
    if (!space || isClosed(space, clock.now()))
      throw new SpaceClosedError(space?.state === 'open' && isExpired(space, clock.now()));
    const [row] = await tx.select({ n: count() }).from(participants).where(eq(participants.spaceId, spaceId));
    // Every participant record counts, the departed included: it is the length of SpaceView.participants.
    if ((row?.n ?? 0) >= limits.participantsPerSpace) {
      throw new LimitReachedError(`this space already has ${limits.participantsPerSpace} participants`);
    }
    // The joins each invitation made, kept as a record. Not capped: decisions.md bounds a space
    // (1,000 participants), not an invitation, and one invitation may admit a full space.
    if (caller.role !== 'invitation') throw new Error('authorize let a non-invitation key join');
    await tx
      .update(invitations)
      .set({ joins: sql`${invitations.joins} + 1` })
      .where(and(eq(invitations.spaceId, spaceId), eq(invitations.id, caller.invitationId)));
    const userId = await resolveUserToken(tx, clock, userToken);
    const pending = space.privacy === 'private';
    const now = clock.now();
    const [inserted] = await tx
      .insert(participants)
      .values({
        spaceId,
        id: participantId,
        name: participantName(input.name),
        role: input.role ?? '',
        isOwner: false,
        isHuman: input.isHuman ?? false,
        status: pending ? 'waitingForApproval' : 'active',
        keyHash: hashSecret(participantPrivateKey),
        // Sealed where it must be handed out again: to the join-status poll, or to the linked human.
        keyEnc: pending || userId ? await box.seal(tx, participantPrivateKey) : null,
        // The join-status ticket: the invitation the join came through, and the pollToken only
        // this joiner was given (anyone else holding the invitation key lacks it).
        invitationId: pending ? caller.invitationId : null,
        pollTokenHash: pending ? hashSecret(pollToken) : null,
        userId,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    if (!inserted) throw new Error('participant insert returned nothing');
    await appendEvent(tx, deps, spaceId, 'participant-status', toParticipantView(config, inserted));
    return pending;
  });
  if (outcome) {
    return {
      pending: true,
      result: {
        participantId,
        status: 'pending',
        statusUrl: joinStatusUrl(config.publicUrl, spaceId, participantId),
        pollToken,
      },
    };
  }
  return { pending: false, result: { participantPrivateKey, participantId } };
}
