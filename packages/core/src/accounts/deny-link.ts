import type { TOk, TUserCodeRequest } from '@convene/contract';
import { and, eq, gt } from 'drizzle-orm';
import { linkRequests } from '../db/schema';
import type { Deps } from '../deps';
import { NotFoundError } from '../errors';
import { authenticateHuman } from './authenticate-human';
import { normalizeUserCode } from './user-code';

export interface DenyLinkOptions {
  deps: Deps;
  bearer: string | undefined;
  input: TUserCodeRequest;
}

/** A logged-in human refuses a pending link request; the agent's poll then answers `denied`. */
export async function denyLink({ deps, bearer, input }: DenyLinkOptions): Promise<TOk> {
  const user = await authenticateHuman(deps, bearer);
  const userCode = normalizeUserCode(input.userCode);
  if (!userCode) throw new NotFoundError('pending link request');
  const [request] = await deps.db
    .update(linkRequests)
    .set({ status: 'denied', userId: user.id })
    .where(
      and(
        eq(linkRequests.userCode, userCode),
        eq(linkRequests.status, 'pending'),
        gt(linkRequests.expiresAt, deps.clock.now()),
      ),
    )
    .returning({ id: linkRequests.id });
  if (!request) throw new NotFoundError('pending link request');
  return { ok: true };
}
