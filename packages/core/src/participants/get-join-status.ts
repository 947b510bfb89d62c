import type { TJoinStatus } from '@convene/contract';
import { and, eq, sql } from 'drizzle-orm';
import { authorize, roles } from '../auth/authorize';
import { participants } from '../db/schema';
import type { Db } from '../db/types';
import type { Deps } from '../deps';
import {
  JoinKeyCollectedError,
  JoinRefusedError,
  NoPendingJoinError,
  NotFoundError,
  UnauthorizedError,
} from '../errors';
import { isUuid } from '../ids';
import { hashSecret } from '../secrets';

/**
 * How long after a private-space joiner first collected its key the same joiner may collect it
 * again: long enough for a client to retry a poll whose answer it lost, short enough that the
 * sealed key does not outlive its use.
 */
export const JOIN_KEY_WINDOW_MS = 10 * 60_000;

export interface GetJoinStatusOptions {
  deps: Deps;
  spaceId: string;
  participantId: string;
  /** The invitation key the join was made with. */
  key: string | undefined;
  /** The pollToken the join answered with (X-Poll-Token). */
  pollToken: string | undefined;
  /**
   * Refuse even the pending answer without the pollToken (401), for callers that name a join by
   * a handle carrying its pollToken (an A2A task id), where a participantId alone names nothing.
   */
  requirePollToken?: boolean | undefined;
}

/** What the caller answers: the body, and whether the join is still waiting (202). */
export interface JoinStatusOutcome {
  result: TJoinStatus;
  pending: boolean;
}

/**
 * A private-space joiner polls with the invitation key it joined with and the pollToken the join
 * answered with: the invitation key is shared, and a joiner's id is visible to the space, so only
 * the pollToken tells the joiner from anyone else holding the invitation. Without it a waiting join
 * answers pending, as the specification's poll with the invitation key alone does, and anything
 * else 401; with another one: 404, as for a join that does not exist. While the owner has not
 * decided: pending.
 * Once approved, a poll hands out the key minted at join. The same joiner (that invitation key and
 * that pollToken) may collect it again for JOIN_KEY_WINDOW_MS after the first time, so an answer
 * lost on the way (a dropped connection, a crash before the key was stored) costs no key; then the
 * sweep (sweepCollectedJoinKeys) forgets the ticket and the sealed copy (a human linked through
 * X-User-Token keeps one for getMySpaceKey), and a poll is 404 (`join_key_collected`). A join that
 * was refused (kicked), or that nobody made through this invitation, is 404 as well, with a code
 * that says which.
 */
export async function getJoinStatus({
  deps,
  spaceId,
  participantId,
  key,
  pollToken,
  requirePollToken,
}: GetJoinStatusOptions): Promise<JoinStatusOutcome> {
  const { db, clock, box } = deps;
  return db.transaction(async (tx) => {
    const { caller } = await authorize(tx, clock, {
      spaceId,
      key,
      allow: roles.invitation,
      whenClosed: 'unauthorized',
    });
    if (!isUuid(participantId)) throw new NotFoundError('join request');
    const [row] = await tx
      .select()
      .from(participants)
      .where(and(eq(participants.spaceId, spaceId), eq(participants.id, participantId)))
      .for('update');
    // The ticket is the invitation the join came through; it is cleared once the key was collected
    // (by the sweep, after the window in which the joiner may collect it again).
    if (!row || row.invitationId !== caller.invitationId) {
      // Collected (or a public join's, handed out with its answer): whoever holds an invitation
      // sees such a participant in getSpace already, so saying so tells nothing new. A join of
      // another invitation whose key waits stays hidden, as there.
      if (row && row.invitationId === null && !row.isOwner && row.status !== 'waitingForApproval')
        throw new JoinKeyCollectedError();
      throw new NoPendingJoinError();
    }
    // Joins made before pollTokens existed have none to check; every join since has one.
    if (row.pollTokenHash !== null) {
      if (!pollToken) {
        // The specification's poll (the invitation key alone) learns that the join still waits;
        // only the key needs the pollToken.
        if (row.status === 'waitingForApproval' && !requirePollToken)
          return { pending: true, result: { status: 'pending' } };
        throw new UnauthorizedError(
          'the pollToken the join answered with is required to collect the key: send it in X-Poll-Token (over MCP, as the pollToken argument)',
          'poll_token_required',
        );
      }
      if (hashSecret(pollToken) !== row.pollTokenHash) throw new NoPendingJoinError();
    }
    switch (row.status) {
      case 'waitingForApproval':
        return { pending: true, result: { status: 'pending' } };
      case 'kicked':
        // Kicked after it collected its key: that key is dead, and this join was not refused.
        if (row.keyCollectedAt) throw new JoinKeyCollectedError();
        throw new JoinRefusedError();
      case 'left':
        if (row.keyCollectedAt) throw new JoinKeyCollectedError();
        throw new NoPendingJoinError();
      case 'active':
      case 'muted': {
        if (!row.keyEnc) throw new NoPendingJoinError();
        // A join made before pollTokens existed is polled with the shared invitation key alone:
        // its key goes out once, and its ticket and sealed copy are forgotten at once, as then.
        const once = row.pollTokenHash === null;
        const now = clock.now();
        // Past the window but not swept yet: as if it were.
        if (row.keyCollectedAt && now.getTime() - row.keyCollectedAt.getTime() >= JOIN_KEY_WINDOW_MS)
          throw new JoinKeyCollectedError();
        // Sealed again under SECRET if it was not.
        let kept = row.keyEnc;
        const participantPrivateKey = await box.open(tx, row.keyEnc, async (_ex, fresh) => {
          kept = fresh;
        });
        const where = and(eq(participants.spaceId, spaceId), eq(participants.id, participantId));
        // Kept for a linked human (getMySpaceKey) only.
        if (once)
          await tx
            .update(participants)
            .set({ invitationId: null, pollTokenHash: null, keyEnc: row.userId ? kept : null })
            .where(where);
        // The window runs from the first collection: a later one never extends it.
        else if (!row.keyCollectedAt || kept !== row.keyEnc)
          await tx
            .update(participants)
            .set({ keyEnc: kept, keyCollectedAt: row.keyCollectedAt ?? now })
            .where(where);
        return { pending: false, result: { participantPrivateKey } };
      }
    }
  });
}

/**
 * Forgets the tickets of joins whose key was collected more than JOIN_KEY_WINDOW_MS ago: the
 * invitation and pollToken that could collect it, and its sealed copy, unless a linked human
 * keeps it for getMySpaceKey. Up to `limit` joins; returns how many.
 */
export async function sweepCollectedJoinKeys(db: Db, now: Date, limit: number): Promise<number> {
  const cutoff = new Date(now.getTime() - JOIN_KEY_WINDOW_MS);
  const rows = await db
    .update(participants)
    .set({
      invitationId: null,
      pollTokenHash: null,
      keyCollectedAt: null,
      keyEnc: sql`case when ${participants.userId} is null then null else ${participants.keyEnc} end`,
    })
    .where(
      sql`(${participants.spaceId}, ${participants.id}) in (
        select space_id, id from participants
        where key_collected_at is not null and key_collected_at <= ${cutoff.toISOString()}::timestamptz
        limit ${limit}
        for update skip locked)`,
    )
    .returning({ id: participants.id });
  return rows.length;
}
