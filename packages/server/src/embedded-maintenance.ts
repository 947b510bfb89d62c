import { type Db, maintainTables } from '@convene/core';
import type { FastifyBaseLogger } from 'fastify';
import { failuresLoggedOnce, repeatEvery } from './repeat';

export interface EmbeddedMaintenanceOptions {
  db: Db;
  /** How often the tables are looked at (autovacuum's naptime, a minute). */
  intervalMs: number;
  log: FastifyBaseLogger;
}

/** A table's turn that took longer than this is said in the log (PGlite holds the event loop). */
const SLOW_MS = 1_000;

/**
 * Autovacuum for the embedded database (see core's `maintainTables`): PGlite's single process
 * never runs it, so without this its data directory grows with every record ever written. The
 * first look is one interval after start-up. Returns the stop function.
 */
export function startEmbeddedMaintenance({
  db,
  intervalMs,
  log,
}: EmbeddedMaintenanceOptions): () => Promise<void> {
  const maintain = failuresLoggedOnce(
    log,
    'embedded database maintenance',
    async () => {
      for (const run of await maintainTables(db)) {
        const line = { table: run.table, action: run.action, ms: Math.round(run.ms) };
        if (run.ms > SLOW_MS) log.info(line, 'embedded database maintenance took long');
        else log.debug(line, 'embedded database maintenance');
      }
    },
    { recovery: false },
  );
  return repeatEvery(intervalMs, maintain);
}
