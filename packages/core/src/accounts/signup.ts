import type { TSessionResult, TSignupRequest } from '@convene/contract';
import { users } from '../db/schema';
import type { Deps } from '../deps';
import { ConflictError } from '../errors';
import { newId } from '../ids';
import { passwordGate } from './password-gate';
import { hashPassword } from './passwords';
import { normalizeEmail, openSession } from './views';

export interface SignupOptions {
  deps: Deps;
  input: TSignupRequest;
  /** Whom the request counts against (its address's bucket): see passwordGate. */
  client?: string | undefined;
}

/** Creates a built-in account and opens its first dashboard session. */
export async function signup({ deps, input, client }: SignupOptions): Promise<TSessionResult> {
  const email = normalizeEmail(input.email);
  const passwordHash = await passwordGate.run(client, () => hashPassword(input.password));
  const [user] = await deps.db
    .insert(users)
    .values({
      id: newId(),
      email,
      name: input.name ?? email.split('@')[0] ?? '',
      passwordHash,
      externalSubject: null,
      createdAt: deps.clock.now(),
    })
    .onConflictDoNothing()
    .returning();
  if (!user) throw new ConflictError('an account with this email already exists');
  return openSession(deps, user);
}
