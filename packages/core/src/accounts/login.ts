import type { TLoginRequest, TSessionResult } from '@convene/contract';
import { eq } from 'drizzle-orm';
import { users } from '../db/schema';
import type { Deps } from '../deps';
import { UnauthorizedError } from '../errors';
import { burnPasswordCheck, verifyPassword } from './passwords';
import { normalizeEmail, openSession } from './views';

export interface LoginOptions {
  deps: Deps;
  input: TLoginRequest;
}

/** One answer for an unknown email and a wrong password, so logins do not reveal who has an account. */
const WRONG = 'wrong email or password';

export async function login({ deps, input }: LoginOptions): Promise<TSessionResult> {
  const [user] = await deps.db
    .select()
    .from(users)
    .where(eq(users.email, normalizeEmail(input.email)));
  if (!user?.passwordHash) {
    await burnPasswordCheck(input.password);
    throw new UnauthorizedError(WRONG);
  }
  if (!(await verifyPassword(input.password, user.passwordHash))) throw new UnauthorizedError(WRONG);
  return openSession(deps, user);
}
