import type { TTokenList } from '@convene/contract';
import { desc, eq } from 'drizzle-orm';
import { apiTokens } from '../db/schema';
import type { Deps } from '../deps';
import { authenticateHuman } from './authenticate-human';
import { toTokenMetadata } from './views';

export interface ListApiTokensOptions {
  deps: Deps;
  bearer: string | undefined;
}

/** This human's tokens, newest first, revoked ones included; never a secret. */
export async function listApiTokens({ deps, bearer }: ListApiTokensOptions): Promise<TTokenList> {
  const user = await authenticateHuman(deps, bearer);
  const rows = await deps.db
    .select()
    .from(apiTokens)
    .where(eq(apiTokens.userId, user.id))
    .orderBy(desc(apiTokens.createdAt), desc(apiTokens.id));
  return rows.map(toTokenMetadata);
}
