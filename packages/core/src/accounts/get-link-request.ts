import type { TLinkRequestView } from '@convene/contract';
import { eq } from 'drizzle-orm';
import { linkRequests } from '../db/schema';
import type { Deps } from '../deps';
import { NotFoundError } from '../errors';
import { authenticateHuman } from './authenticate-human';
import { normalizeUserCode } from './user-code';

export interface GetLinkRequestOptions {
  deps: Deps;
  bearer: string | undefined;
  userCode: string;
}

/** What the approval page shows: which agent asks, and whether the request can still be decided. */
export async function getLinkRequest({
  deps,
  bearer,
  userCode,
}: GetLinkRequestOptions): Promise<TLinkRequestView> {
  await authenticateHuman(deps, bearer);
  const code = normalizeUserCode(userCode);
  if (!code) throw new NotFoundError('link request');
  const [row] = await deps.db.select().from(linkRequests).where(eq(linkRequests.userCode, code));
  if (!row) throw new NotFoundError('link request');
  const expired = row.status !== 'consumed' && row.expiresAt.getTime() <= deps.clock.now().getTime();
  return {
    agentName: row.agentName,
    status: expired ? 'expired' : row.status,
    expiresAt: row.expiresAt.toISOString(),
  };
}
