import { type Deps, recordPresence } from '@convene/core';
import type { FastifyRequest } from 'fastify';
import { presentedCredential } from './client';

/**
 * Verified presence: each request presenting a space key (and each open stream, every ping)
 * moves its participant's `lastSeenAt`, at most once every `intervalMs` per key and node (5 s:
 * `presenceIntervalMs` of the config).
 * The write is awaited before the request goes on, so an answer that lists participants already
 * shows its caller seen; a key that names no live participant changes nothing.
 */
export class Presence {
  /** Key → until when (this process's clock) a new write is not needed. */
  private readonly fresh = new Map<string, number>();

  constructor(
    private readonly deps: Deps,
    private readonly intervalMs: number,
  ) {}

  async touch(key: string): Promise<void> {
    const now = Date.now();
    if ((this.fresh.get(key) ?? 0) > now) return;
    if (this.fresh.size > 50_000) {
      for (const [k, until] of this.fresh) if (until <= now) this.fresh.delete(k);
    }
    this.fresh.set(key, now + this.intervalMs);
    try {
      await recordPresence({ deps: this.deps, key });
    } catch (error) {
      // Try again with the next request.
      this.fresh.delete(key);
      throw error;
    }
  }

  /** The request's space key, if it presents one (`X-Private-Key` or `?key=`). */
  async touchRequest(request: FastifyRequest): Promise<void> {
    const presented = presentedCredential(request);
    if (presented?.kind === 'space-key' && /^[0-9a-f]{64}$/i.test(presented.value))
      await this.touch(presented.value);
  }
}
