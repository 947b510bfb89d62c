import type { TOk, TUserCodeRequest } from '@convene/contract';
import { and, eq, gt } from 'drizzle-orm';
import { linkRequests } from '../db/schema';
import type { Deps } from '../deps';
import { NotFoundError } from '../errors';
import { newId } from '../ids';
import { authenticateHuman } from './authenticate-human';
import { insertApiToken } from './create-api-token';
import { normalizeUserCode } from './user-code';

export interface ApproveLinkOptions {
  deps: Deps;
  bearer: string | undefined;
  input: TUserCodeRequest;
}

export const LINKED_TOKEN_NAME = 'Linked agent';

/**
 * A logged-in human approves a pending link request: a `usr_` token is minted for them (named
 * after the agent) and kept sealed on the request until the agent's one successful poll.
 * Unknown, expired and already decided codes are all 404.
 */
export async function approveLink({ deps, bearer, input }: ApproveLinkOptions): Promise<TOk> {
  const user = await authenticateHuman(deps, bearer);
  const userCode = normalizeUserCode(input.userCode);
  if (!userCode) throw new NotFoundError('pending link request');
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    const [request] = await tx
      .update(linkRequests)
      .set({ status: 'approved', userId: user.id })
      .where(
        and(
          eq(linkRequests.userCode, userCode),
          eq(linkRequests.status, 'pending'),
          gt(linkRequests.expiresAt, now),
        ),
      )
      .returning({ id: linkRequests.id, agentName: linkRequests.agentName });
    if (!request) throw new NotFoundError('pending link request');
    const minted = await insertApiToken(tx, {
      id: newId(),
      userId: user.id,
      name: request.agentName ?? LINKED_TOKEN_NAME,
      now,
      ttlSeconds: deps.config.userTokenTtlSeconds,
    });
    await tx
      .update(linkRequests)
      .set({ tokenId: minted.id, tokenEnc: await deps.box.seal(tx, minted.token) })
      .where(eq(linkRequests.id, request.id));
  });
  return { ok: true };
}
