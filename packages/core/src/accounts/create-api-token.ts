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
    ttlSeconds: deps.config.userTokenTtlSeconds,
  });
}

/**
 * The one place a `usr_` token row is written (dashboard and link approval alike). Every token
 * expires: a token an agent forgot in a config file stops working on its own.
 */
export async function insertApiToken(
  ex: Executor,
  {
    userId,
    name,
    now,
    ttlSeconds,
    id = newId(),
  }: { userId: string; name: string; now: Date; ttlSeconds: number; id?: string },
): Promise<TCreateApiTokenResult> {
  const token = mintUserToken();
  const prefix = displayPrefix(token);
  const expiresAt = new Date(now.getTime() + ttlSeconds * 1000);
  await ex.insert(apiTokens).values({
    id,
    userId,
    name,
    prefix,
    tokenHash: hashSecret(token),
    createdAt: now,
    expiresAt,
  });
  return { id, name, token, prefix, expiresAt: expiresAt.toISOString() };
}
