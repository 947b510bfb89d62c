import type { ServerResponse } from 'node:http';
import { type Deps, recordPresence } from '@convene/core';
import type { FastifyRequest } from 'fastify';
import { presentedCredential } from './client';

/**
 * Verified presence: each request presenting a space key moves its participant's `lastSeenAt`,
 * at most once every `intervalMs` per key and node (5 s: `presenceIntervalMs` of the config), and
 * a connection held open (an event stream, an MCP session's stream, a long poll) keeps it moving
 * while it lasts: every key held is written again every `heldMs` (14 s: `presenceHeldMs`), so
 * that `lastSeenAt` of a connected participant is never older than that. The write of a request
 * is awaited before the request goes on, so an answer that lists participants already shows its
 * caller seen; a key that names no live participant changes nothing.
 */
export class Presence {
  /** Key → until when (this process's clock) a new write is not needed. */
  private readonly fresh = new Map<string, number>();
  /** Keys of the connections open now → how many. */
  private readonly held = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: Deps,
    private readonly intervalMs: number,
    /** How often the keys held are written (each round, one batched write). */
    private readonly heldMs: number,
    /** Told when writing the held keys failed (the next round tries again). */
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  /** A connection of `key`'s participant opened: seen now, and every `heldMs` until released. */
  hold(key: string): void {
    this.held.set(key, (this.held.get(key) ?? 0) + 1);
    this.touch(key).catch(this.onError);
    if (!this.timer) {
      this.timer = setInterval(() => this.touchHeld(), this.heldMs);
      this.timer.unref();
    }
  }

  release(key: string): void {
    const holders = (this.held.get(key) ?? 0) - 1;
    if (holders > 0) this.held.set(key, holders);
    else this.held.delete(key);
    if (this.held.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** Every key held, in one batched write (recordPresence), whatever a request wrote since. */
  private touchHeld(): void {
    const until = Date.now() + Math.min(this.intervalMs, this.heldMs);
    for (const key of this.held.keys()) {
      this.fresh.set(key, until);
      recordPresence({ deps: this.deps, key }).catch(this.onError);
    }
  }

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

  /**
   * The request's space key, if it presents one (`X-Private-Key` or `?key=`); held until the
   * answer is over when the request waits for news (`waits`: a long poll's `wait`).
   */
  async touchRequest(request: FastifyRequest, response: ServerResponse, waits: boolean): Promise<void> {
    if (waits) {
      this.holdUntilClosed(request, response);
      return;
    }
    const key = spaceKeyOf(request);
    if (key) await this.touch(key);
  }

  /** Holds the request's space key, if it presents one, until `response` closes (a stream, a wait). */
  holdUntilClosed(request: FastifyRequest, response: ServerResponse): void {
    const key = spaceKeyOf(request);
    if (!key) return;
    this.hold(key);
    response.once('close', () => this.release(key));
  }

  /**
   * A space key a call carries outside its request's headers (an MCP tool's `privateKey`
   * argument): seen now, and held while the call `waits` for news, until the function returned
   * is called.
   */
  async attend(key: string, waits: boolean): Promise<() => void> {
    if (!isSpaceKey(key)) return () => {};
    if (!waits) {
      await this.touch(key);
      return () => {};
    }
    this.hold(key);
    let held = true;
    return () => {
      if (held) this.release(key);
      held = false;
    };
  }
}

/** Owner and participant keys: the keys that name a participant (an invitation key names none). */
const isSpaceKey = (value: string) => /^[0-9a-f]{64}$/i.test(value);

function spaceKeyOf(request: FastifyRequest): string | undefined {
  const presented = presentedCredential(request);
  return presented?.kind === 'space-key' && isSpaceKey(presented.value) ? presented.value : undefined;
}
