import type { TLoginRequest, TSessionResult } from '@convene/contract';
import { eq } from 'drizzle-orm';
import { users } from '../db/schema';
import type { Deps } from '../deps';
import { UnauthorizedError } from '../errors';
import { passwordGate } from './password-gate';
import { burnPasswordCheck, verifyPassword } from './passwords';
import { normalizeEmail, openSession } from './views';

export interface LoginOptions {
  deps: Deps;
  input: TLoginRequest;
  /** Whom the request counts against (its address's bucket): see passwordGate. */
  client?: string | undefined;
}

/** One answer for an unknown email and a wrong password, so logins do not reveal who has an account. */
const WRONG = 'wrong email or password';

export async function login({ deps, input, client }: LoginOptions): Promise<TSessionResult> {
  const [user] = await deps.db
    .select()
    .from(users)
    .where(eq(users.email, normalizeEmail(input.email)));
  const stored = user?.passwordHash;
  // The same work, in the same queue, whether or not there is an account to check against.
  const matches = await passwordGate.run(client, () =>
    stored ? verifyPassword(input.password, stored) : burnPasswordCheck(input.password).then(() => false),
  );
  if (!user || !matches) throw new UnauthorizedError(WRONG);
  return openSession(deps, user);
}
