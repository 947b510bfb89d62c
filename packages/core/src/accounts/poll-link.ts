import type { TPollLinkRequest, TPollLinkResult } from '@convene/contract';
import { and, eq, gt, isNotNull } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { linkRequests } from '../db/schema';
import { beforeCommit, type Deps, type WriteDeadline } from '../deps';
import { GoneError, NotFoundError } from '../errors';
import { displayPrefix, hashSecret } from '../secrets';
import { sweepExpiredLinks } from './link-requests';

export interface PollLinkOptions {
  deps: Deps;
  input: TPollLinkRequest;
  /** The request's deadline (REST's 30 s): a poll answered 503 hands out nothing. */
  deadline?: WriteDeadline | undefined;
}

const before = alias(linkRequests, 'before');

/**
 * The agent's poll. An approved request hands its token over exactly once: the one conditional
 * UPDATE that moves it to `consumed` also clears the sealed token and returns it (from the
 * row as it was), so of any number of concurrent polls on any nodes only one receives it.
 */
export async function pollLink({ deps, input, deadline }: PollLinkOptions): Promise<TPollLinkResult> {
  const { db, clock, box } = deps;
  const deviceCodeHash = hashSecret(input.deviceCode);
  const now = clock.now();

  // In a transaction of its own, so that a poll answered 503 before it committed (the request's
  // deadline passed) leaves the token to the next poll rather than to nobody.
  const token = await db.transaction(async (tx) => {
    const [claimed] = await tx
      .update(linkRequests)
      .set({ status: 'consumed', tokenEnc: null })
      .from(before)
      .where(
        and(
          eq(before.id, linkRequests.id),
          eq(linkRequests.deviceCodeHash, deviceCodeHash),
          eq(linkRequests.status, 'approved'),
          gt(linkRequests.expiresAt, now),
          isNotNull(linkRequests.tokenEnc),
        ),
      )
      .returning({ tokenEnc: before.tokenEnc });
    if (!claimed?.tokenEnc) return undefined;
    // Cleared by the claim: nothing to seal again.
    const opened = await box.open(tx, claimed.tokenEnc);
    // Answered 503 already, the token stays; else the poll's answer is the commit's, however late.
    beforeCommit(deadline);
    return opened;
  });
  if (token !== undefined) return { status: 'approved', token, prefix: displayPrefix(token) };

  const [row] = await db.select().from(linkRequests).where(eq(linkRequests.deviceCodeHash, deviceCodeHash));
  if (!row) throw new NotFoundError('link request');
  if (row.status === 'consumed') throw new GoneError('this link request was already used: start over');
  if (row.expiresAt.getTime() <= now.getTime()) {
    // An approval nobody collected in time: its token must not outlive the request.
    if (row.status === 'approved') await sweepExpiredLinks(db, now);
    throw new GoneError('this link request expired: start over');
  }
  // Approved between the two statements: the next poll collects it; until then it is pending.
  if (row.status === 'approved') return { status: 'pending' };
  return { status: row.status };
}
