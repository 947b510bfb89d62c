import type { TCreateApiTokenRequest, TCreateApiTokenResult } from '@convene/contract';
import { apiTokens } from '../db/schema';
import type { Executor } from '../db/types';
import type { Deps } from '../deps';
import { newId } from '../ids';
import { displayPrefix, hashSecret, mintUserToken } from '../secrets';
import { authenticateHuman } from './authenticate-human';

export interface CreateApiTokenOptions {
  deps: Deps;
  bearer: string | undefined;
  input: TCreateApiTokenRequest;
}

export const DEFAULT_TOKEN_NAME = 'API token';

/** Mints a `usr_` token on the dashboard; the plaintext is returned here once and never again. */
export async function createApiToken({
  deps,
  bearer,
  input,
}: CreateApiTokenOptions): Promise<TCreateApiTokenResult> {
  const user = await authenticateHuman(deps, bearer);
  return insertApiToken(deps.db, {
    userId: user.id,
    name: input.name ?? DEFAULT_TOKEN_NAME,
    now: deps.clock.now(),
  });
}

/** The one place a `usr_` token row is written (dashboard and link approval alike). */
export async function insertApiToken(
  ex: Executor,
  { userId, name, now, id = newId() }: { userId: string; name: string; now: Date; id?: string },
): Promise<TCreateApiTokenResult> {
  const token = mintUserToken();
  const prefix = displayPrefix(token);
  await ex.insert(apiTokens).values({
    id,
    userId,
    name,
    prefix,
    tokenHash: hashSecret(token),
    createdAt: now,
  });
  return { id, name, token, prefix };
}
