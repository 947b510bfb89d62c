import type { Clock, IdempotencyStore, RateLimiter } from '@convene/core';
import type { FastifyInstance } from 'fastify';

/** Something that deletes up to `limit` records past their time, returning how many. */
export interface Sweepable {
  sweep(now: Date, limit: number): Promise<number>;
}

export interface SweeperOptions {
  limiter: RateLimiter;
  store: IdempotencyStore;
  clock: Clock;
  intervalMs: number;
  /** More to sweep on the same schedule (closed and expired spaces past their retention). */
  also?: Sweepable[];
}

const BATCH = 1000;
const MAX_BATCHES = 20;

/**
 * Deletes expired rate-limit counters and idempotency records (and whatever `also` names) while
 * the app runs: a few indexed DELETEs per interval on each node, whichever node gets there first.
 */
export function registerPolicySweeper(app: FastifyInstance, options: SweeperOptions): void {
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  const sweep = async () => {
    if (running) return;
    running = true;
    try {
      // Each on its own: one that fails (a lock, an outage) never keeps the others from their turn,
      // among them the sweep that forgets collected join keys.
      for (const target of [options.limiter, options.store, ...(options.also ?? [])]) {
        try {
          for (let i = 0; i < MAX_BATCHES; i++) {
            if ((await target.sweep(options.clock.now(), BATCH)) < BATCH) break;
          }
        } catch (err) {
          app.log.warn({ err }, 'sweeping expired records failed');
        }
      }
    } finally {
      running = false;
    }
  };
  app.addHook('onReady', async () => {
    timer = setInterval(sweep, options.intervalMs);
    timer.unref();
  });
  app.addHook('onClose', async () => clearInterval(timer));
}
