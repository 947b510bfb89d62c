import type { TMySpaceKey } from '@convene/contract';
import { and, desc, eq } from 'drizzle-orm';
import { participants, spaceColumns, spaces } from '../db/schema';
import type { Deps } from '../deps';
import { NotFoundError, type SpecificCode, UnauthorizedError } from '../errors';
import { isUuid } from '../ids';
import { isClosed } from '../spaces/views';
import { humanFromSession } from './authenticate-human';
import { resolveUserToken } from './resolve-user-token';

/** What key recovery without a dashboard JWT or a usr_ token is told (401). */
export const HUMAN_CREDENTIAL_REQUIRED =
  'send the dashboard JWT (Authorization: Bearer) or a usr_ token in X-User-Token';

export interface GetMySpaceKeyOptions {
  deps: Deps;
  spaceId: string;
  /** The dashboard JWT (Authorization: Bearer). */
  bearer: string | undefined;
  /** X-User-Token: the one route where a `usr_` token identifies its human. */
  userToken: string | undefined;
}

/**
 * Key recovery: the space key this human holds through a participant record linked to them
 * (X-User-Token at create or join). Only live records of open spaces count (a dead key is of no
 * use), the owner's before a participant's; anything else is 404, which tells a human who held a
 * key there why it is gone (kicked, left, closed, expired, or a join still waiting).
 */
export async function getMySpaceKey({
  deps,
  spaceId,
  bearer,
  userToken,
}: GetMySpaceKeyOptions): Promise<TMySpaceKey> {
  const { db, clock, box } = deps;
  const userId = (await humanFromSession(deps, bearer))?.id ?? (await resolveUserToken(db, clock, userToken));
  if (!userId) {
    // A usr_ token sent where the JWT goes: a working token, in the wrong header.
    if (bearer?.startsWith('usr_') && !userToken)
      throw new UnauthorizedError(
        'a usr_ API token goes in the X-User-Token header here, not Authorization: Bearer (which carries the dashboard JWT)',
      );
    throw new UnauthorizedError(
      bearer || userToken
        ? 'the credential sent is not valid (a usr_ token revoked, expired or unknown, or a dashboard session expired): send a valid dashboard JWT (Authorization: Bearer) or usr_ token (X-User-Token)'
        : HUMAN_CREDENTIAL_REQUIRED,
    );
  }
  if (!isUuid(spaceId)) throw new NotFoundError('space');
  const [space] = await db.select(spaceColumns).from(spaces).where(eq(spaces.id, spaceId));
  // This human's records in the space, the owner's first, then the latest. Why none holds a working
  // key is said to them alone: to anyone else the space holds no key of theirs, as any space.
  const records = space
    ? await db
        .select({
          id: participants.id,
          isOwner: participants.isOwner,
          status: participants.status,
          keyEnc: participants.keyEnc,
        })
        .from(participants)
        .where(and(eq(participants.spaceId, spaceId), eq(participants.userId, userId)))
        .orderBy(desc(participants.isOwner), desc(participants.createdAt))
    : [];
  if (!space || records.length === 0) throw new NotFoundError('key for this space');
  if (isClosed(space, clock.now()))
    throw space.state === 'closed'
      ? keyGone('the space is closed, and its keys no longer work', 'space_closed')
      : keyGone('the space has expired, and its keys no longer work', 'space_expired');
  const held = records.find((r) => (r.status === 'active' || r.status === 'muted') && r.keyEnc !== null);
  const keyEnc = held?.keyEnc;
  if (!held || !keyEnc) {
    const [{ status }] = records as [(typeof records)[number]];
    throw status === 'kicked'
      ? keyGone('you were removed from this space', 'participant_removed')
      : status === 'left'
        ? keyGone('you left this space', 'participant_left')
        : keyGone(
            status === 'waitingForApproval'
              ? "your join waits for the owner's approval: its key comes with the join-status poll"
              : 'the key was not kept for recovery (joined without X-User-Token)',
          );
  }
  const privateKey = await box.open(db, keyEnc, (ex, fresh) =>
    ex
      .update(participants)
      .set({ keyEnc: fresh })
      .where(
        and(eq(participants.spaceId, spaceId), eq(participants.id, held.id), eq(participants.keyEnc, keyEnc)),
      ),
  );
  return { role: held.isOwner ? 'owner' : 'participant', privateKey };
}

/** 404 for a human whose record in the space holds no working key, saying why (and its code). */
function keyGone(why: string, code?: SpecificCode): NotFoundError {
  const error = new NotFoundError('key for this space', code);
  error.message = `key for this space not found: ${why}`;
  return error;
}
