import type { Database } from '@convene/core';
import type { FastifyBaseLogger } from 'fastify';
import { failuresLoggedOnce, repeatEvery } from './repeat';

export interface StalledSessionSweeperOptions {
  endStalledSessions: NonNullable<Database['endStalledSessions']>;
  /** How often this node looks (every node does: any may find another's frozen sessions). */
  intervalMs: number;
  log: FastifyBaseLogger;
}

/**
 * Ends the sessions of frozen nodes that PostgreSQL's idle-in-transaction timeout cannot see (see
 * core's `endStalledSessions`), on every node of a PostgreSQL deployment. Returns the stop
 * function.
 */
export function startStalledSessionSweeper({
  endStalledSessions,
  intervalMs,
  log,
}: StalledSessionSweeperOptions): () => Promise<void> {
  const sweep = failuresLoggedOnce(log, 'stalled session sweep', async () => {
    for (const session of await endStalledSessions()) {
      log.warn(
        {
          pid: session.pid,
          applicationName: session.applicationName,
          waitedMs: Math.round(session.waitedMs),
        },
        'ended a stalled PostgreSQL session: its node (this one or another) left it in the middle of a ' +
          'statement, holding its locks, for longer than the idle-in-transaction timeout (frozen or cut ' +
          'off); its transaction is rolled back',
      );
    }
  });
  return repeatEvery(intervalMs, sweep);
}
