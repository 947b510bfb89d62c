import { RateLimitedError } from '../errors';

/**
 * How many password hashes run at once in this process, and how many one client may have running
 * or waiting. A scrypt hash holds one of libuv's four worker threads (and 32 MiB) for tens of
 * milliseconds: unbounded, one address's burst of wrong logins queued every other user's login
 * behind it (a hostile-client trial: 299 at once, another user's login then took 15.7 s) and took
 * the threads that DNS lookups and file reads share. Bounded so, a login waits behind at most
 * PER_CLIENT hashes of each other client, and two threads stay free.
 */
export const PASSWORD_HASHES_AT_ONCE = 2;
export const PASSWORD_HASHES_PER_CLIENT = 4;

/**
 * Runs password hashing work in a first-come queue of this process, refusing a client that has
 * PER_CLIENT already running or waiting (429, retry in a second). `client` is who the request
 * counts against (its remote address's bucket); work without one (a test, a script) is not
 * refused, only queued. Per process on purpose: what it shares out is this process's threads.
 */
export class PasswordGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly perClient = new Map<string, number>();

  constructor(
    private readonly atOnce = PASSWORD_HASHES_AT_ONCE,
    private readonly perClientMax = PASSWORD_HASHES_PER_CLIENT,
  ) {}

  async run<T>(client: string | undefined, work: () => Promise<T>): Promise<T> {
    const held = client === undefined ? 0 : (this.perClient.get(client) ?? 0);
    if (held >= this.perClientMax)
      throw new RateLimitedError(1, 'too many password checks from this address at once: retry in a second');
    if (client !== undefined) this.perClient.set(client, held + 1);
    try {
      if (this.running >= this.atOnce) await new Promise<void>((resolve) => this.waiting.push(resolve));
      else this.running += 1;
      try {
        return await work();
      } finally {
        // The slot goes to the next in line as it is, or back to the pool.
        const next = this.waiting.shift();
        if (next) next();
        else this.running -= 1;
      }
    } finally {
      if (client !== undefined) {
        const left = (this.perClient.get(client) ?? 1) - 1;
        if (left === 0) this.perClient.delete(client);
        else this.perClient.set(client, left);
      }
    }
  }
}

/** This process's gate, shared by every login and signup it runs. */
export const passwordGate = new PasswordGate();
