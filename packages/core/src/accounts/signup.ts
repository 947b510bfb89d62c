import type { TSessionResult, TSignupRequest } from '@convene/contract';
import { users } from '../db/schema';
import { beforeCommit, type Deps, type WriteDeadline } from '../deps';
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
  /** The request's deadline: an account whose request was answered 503 is not created. */
  deadline?: WriteDeadline | undefined;
}

/** Creates a built-in account and opens its first dashboard session. */
export async function signup({ deps, input, client, deadline }: SignupOptions): Promise<TSessionResult> {
  const email = normalizeEmail(input.email);
  // Hashed before the transaction, which waits for no password.
  const passwordHash = await passwordGate.run(client, () => hashPassword(input.password));
  const user = await deps.db.transaction(async (tx) => {
    const [created] = await tx
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
    // Answered 503 already, the account is not made (its retry would be told the email is taken).
    if (created) beforeCommit(deadline);
    return created;
  });
  if (!user) throw new ConflictError('an account with this email already exists');
  return openSession(deps, user);
}
