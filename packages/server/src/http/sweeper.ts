import type { Clock, IdempotencyStore, RateLimiter } from '@convene/core';
import type { FastifyInstance } from 'fastify';

export interface SweeperOptions {
  limiter: RateLimiter;
  store: IdempotencyStore;
  clock: Clock;
  intervalMs: number;
}

const BATCH = 1000;
const MAX_BATCHES = 20;

/**
 * Deletes expired rate-limit counters and idempotency records while the app runs: a few indexed
 * DELETEs per interval on each node, whichever node gets there first.
 */
export function registerPolicySweeper(app: FastifyInstance, options: SweeperOptions): void {
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  const sweep = async () => {
    if (running) return;
    running = true;
    try {
      for (const target of [options.limiter, options.store]) {
        for (let i = 0; i < MAX_BATCHES; i++) {
          if ((await target.sweep(options.clock.now(), BATCH)) < BATCH) break;
        }
      }
    } catch (err) {
      app.log.warn({ err }, 'sweeping expired policy records failed');
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
