import { RateLimitedError } from '../errors';

/**
 * Work that holds one of libuv's four worker threads (a scrypt hash, a DNS lookup), shared out in
 * this process: a first-come queue that runs `atOnce` at a time, and refuses a client that has
 * `perClient` already running or waiting (429). Unbounded, one address's burst
 * queued every other user's work behind it and took the threads that file reads share. `client`
 * is who the request counts against (its remote address's bucket); work without one (a test, a
 * script, an MCP tool) is not refused, only queued. Per process on purpose: what it shares out is
 * this process's threads.
 */
export class WorkGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly perClient = new Map<string, number>();

  constructor(
    private readonly atOnce: number,
    private readonly perClientMax: number,
    /** What a refused client is told. */
    private readonly refusal: string,
    /** When it is told to try again (Retry-After). */
    private readonly retryAfterSeconds = 1,
  ) {}

  async run<T>(client: string | undefined, work: () => Promise<T>): Promise<T> {
    const held = client === undefined ? 0 : (this.perClient.get(client) ?? 0);
    if (held >= this.perClientMax) throw new RateLimitedError(this.retryAfterSeconds, this.refusal);
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
