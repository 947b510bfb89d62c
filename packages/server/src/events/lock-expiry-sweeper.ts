import { type Deps, releaseExpiredLocks } from '@convene/core';
import type { FastifyBaseLogger } from 'fastify';
import { failuresLoggedOnce, repeatEvery } from '../repeat';

export interface LockExpirySweeperOptions {
  deps: Pick<Deps, 'db' | 'clock' | 'events'>;
  /** How often this node looks for lapsed locks (every node does; each lapse is announced once). */
  intervalMs: number;
  log: FastifyBaseLogger;
}

/** Batches of locks released per round before yielding to the next interval. */
const BATCH = 100;
const MAX_BATCHES = 10;

/**
 * Announces lapsed locks on this node's schedule: `artifact-unlocked` reaches every stream within
 * about `intervalMs` of `lockExpiresAt` (decisions.md: within 5 s). The first sweep runs before
 * this resolves, so the statement's first (slowest) run is paid at start-up, not while serving:
 * on PGlite a query holds the event loop. Resolves to the stop function.
 */
export async function startLockExpirySweeper({
  deps,
  intervalMs,
  log,
}: LockExpirySweeperOptions): Promise<() => Promise<void>> {
  const sweep = failuresLoggedOnce(log, 'lock expiry sweep', async () => {
    for (let i = 0; i < MAX_BATCHES; i++) {
      if ((await releaseExpiredLocks({ deps, limit: BATCH })) < BATCH) break;
    }
  });
  await sweep();
  return repeatEvery(intervalMs, sweep);
}
