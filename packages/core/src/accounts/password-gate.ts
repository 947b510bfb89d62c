import { WorkGate } from '../infra/work-gate';

/**
 * How many password hashes run at once in this process, and how many one client may have running
 * or waiting. A scrypt hash holds a worker thread (and 32 MiB) for tens of milliseconds: a
 * hostile-client trial sent 299 wrong logins at once from one address, and another user's login
 * then took 15.7 s. So bounded, a login waits behind at most PER_CLIENT hashes of each other
 * client, and two threads stay free.
 */
export const PASSWORD_HASHES_AT_ONCE = 2;
export const PASSWORD_HASHES_PER_CLIENT = 4;

/** This process's gate, shared by every login and signup it runs. */
export const passwordGate = new WorkGate(
  PASSWORD_HASHES_AT_ONCE,
  PASSWORD_HASHES_PER_CLIENT,
  'too many password checks from this address at once: retry in a second',
);
