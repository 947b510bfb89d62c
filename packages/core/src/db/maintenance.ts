import { sql } from 'drizzle-orm';
import { rowsOf } from './migrate';
import type { Db } from './types';

/**
 * What PostgreSQL's autovacuum would do, for the embedded database, whose single process never
 * runs it. Without it, the rows that churn (idempotency records, rate-limit windows, stream
 * slots, webhook deliveries, purged spaces) leave pages that are never reused: the data
 * directory grows with every record ever written, its indexes too, and plans are made on the
 * statistics of the day the tables were created. The server calls `maintainTables` on PGlite
 * every minute (autovacuum's own naptime), with autovacuum's default thresholds.
 */
export interface TableActivity {
  /** The table, qualified and quoted as `regclass` prints it. */
  table: string;
  liveTuples: number;
  deadTuples: number;
  insertsSinceVacuum: number;
  modificationsSinceAnalyze: number;
  /** Transactions since the table's oldest unfrozen row id (wraparound is due at 2^31). */
  xidAge: number;
}

export type MaintenanceAction = 'vacuum' | 'analyze';

/** PostgreSQL 18's autovacuum defaults. */
export const AUTOVACUUM_DEFAULTS = {
  vacuumThreshold: 50,
  vacuumScaleFactor: 0.2,
  insertThreshold: 1000,
  insertScaleFactor: 0.2,
  analyzeThreshold: 50,
  analyzeScaleFactor: 0.1,
  freezeMaxAge: 200_000_000,
} as const;

/** What autovacuum would do to a table now: `vacuum` (with analyze), `analyze` alone, or nothing. */
export function dueMaintenance(
  activity: TableActivity,
  limits: typeof AUTOVACUUM_DEFAULTS = AUTOVACUUM_DEFAULTS,
): MaintenanceAction | undefined {
  const { liveTuples } = activity;
  if (
    activity.deadTuples > limits.vacuumThreshold + limits.vacuumScaleFactor * liveTuples ||
    activity.insertsSinceVacuum > limits.insertThreshold + limits.insertScaleFactor * liveTuples ||
    activity.xidAge > limits.freezeMaxAge
  )
    return 'vacuum';
  if (activity.modificationsSinceAnalyze > limits.analyzeThreshold + limits.analyzeScaleFactor * liveTuples)
    return 'analyze';
  return undefined;
}

/** Every table of the database (system catalogs included: they age towards wraparound too). */
export async function tableActivity(db: Db): Promise<TableActivity[]> {
  // A session's counts reach the views when it next goes idle at least a second after its last
  // report: have them reported now (on PGlite every write is this one session's).
  await db.execute(sql`select pg_stat_force_next_flush()`);
  const rows = rowsOf<{
    table: string;
    live: number;
    dead: number;
    inserts: number;
    modifications: number;
    xid_age: number;
  }>(
    await db.execute(sql`
      select s.relid::regclass::text as table,
             s.n_live_tup::float8 as live, s.n_dead_tup::float8 as dead,
             s.n_ins_since_vacuum::float8 as inserts, s.n_mod_since_analyze::float8 as modifications,
             age(c.relfrozenxid)::float8 as xid_age
      from pg_stat_all_tables s join pg_class c on c.oid = s.relid
      where c.relkind in ('r', 'm') and s.schemaname not like 'pg\\_toast%'
      order by s.relid`),
  );
  return rows.map((row) => ({
    table: row.table,
    liveTuples: Number(row.live),
    deadTuples: Number(row.dead),
    insertsSinceVacuum: Number(row.inserts),
    modificationsSinceAnalyze: Number(row.modifications),
    xidAge: Number(row.xid_age),
  }));
}

export interface MaintenanceRun {
  table: string;
  action: MaintenanceAction;
  ms: number;
}

/**
 * Vacuums (and analyzes) or analyzes each table that is due, one statement at a time, so other
 * queries take their turn between them. Outside any transaction, as VACUUM must be.
 */
export async function maintainTables(db: Db): Promise<MaintenanceRun[]> {
  const runs: MaintenanceRun[] = [];
  for (const activity of await tableActivity(db)) {
    const action = dueMaintenance(activity);
    if (!action) continue;
    const started = performance.now();
    // The name comes from regclass, which quotes what needs quoting.
    await db.execute(sql.raw(`${action === 'vacuum' ? 'vacuum (analyze)' : 'analyze'} ${activity.table}`));
    runs.push({ table: activity.table, action, ms: performance.now() - started });
  }
  return runs;
}
