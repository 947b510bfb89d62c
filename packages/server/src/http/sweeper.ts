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
  /** How long one target's turn may go on deleting full batches (5 s); the next interval resumes. */
  turnMs?: number;
}

const BATCH = 1000;

/**
 * Deletes expired rate-limit counters and idempotency records (and whatever `also` names) while
 * the app runs: indexed DELETEs of BATCH rows per interval on each node, as many as it takes
 * within a turn; the nodes' sweeps skip the rows another holds, so each node adds to the pace (a
 * fixed 20 batches a turn once capped it at 20,000 records a minute, behind a busy deployment).
 */
export function registerPolicySweeper(app: FastifyInstance, options: SweeperOptions): void {
  const turnMs = options.turnMs ?? 5_000;
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
          const now = options.clock.now();
          const started = Date.now();
          while ((await target.sweep(now, BATCH)) === BATCH && Date.now() - started < turnMs) {}
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
