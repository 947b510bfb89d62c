import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTOVACUUM_DEFAULTS, dueMaintenance, maintainTables, rowsOf, type TableActivity } from '../src/db';
import { openTestDatabase, type TestDatabase } from '../src/testing';

const quiet: TableActivity = {
  table: 'rate_limits',
  liveTuples: 10_000,
  deadTuples: 0,
  insertsSinceVacuum: 0,
  modificationsSinceAnalyze: 0,
  xidAge: 1_000,
};

describe('dueMaintenance (autovacuum’s defaults)', () => {
  it('vacuums past 50 dead rows and a fifth of the live ones', () => {
    expect(dueMaintenance({ ...quiet, deadTuples: 2_050 })).toBeUndefined();
    expect(dueMaintenance({ ...quiet, deadTuples: 2_051 })).toBe('vacuum');
    expect(dueMaintenance({ ...quiet, liveTuples: 0, deadTuples: 51 })).toBe('vacuum');
  });

  it('vacuums a table that only grows (past 1,000 inserts and a fifth), and one near wraparound', () => {
    expect(dueMaintenance({ ...quiet, insertsSinceVacuum: 3_000 })).toBeUndefined();
    expect(dueMaintenance({ ...quiet, insertsSinceVacuum: 3_001 })).toBe('vacuum');
    expect(dueMaintenance({ ...quiet, xidAge: AUTOVACUUM_DEFAULTS.freezeMaxAge + 1 })).toBe('vacuum');
  });

  it('analyzes alone past 50 changed rows and a tenth of the live ones', () => {
    expect(dueMaintenance({ ...quiet, modificationsSinceAnalyze: 1_050 })).toBeUndefined();
    expect(dueMaintenance({ ...quiet, modificationsSinceAnalyze: 1_051 })).toBe('analyze');
  });
});

let t: TestDatabase;
beforeAll(async () => {
  t = await openTestDatabase();
});
afterAll(() => t?.close());

// What the embedded database needs: PostgreSQL's own autovacuum runs on a server, whose other
// sessions' counts reach the views on their own schedule.
describe.skipIf(process.env.TEST_DATABASE_URL)('maintainTables on the embedded database', () => {
  const sizes = async () =>
    rowsOf<{ heap: number; total: number }>(
      await t.database.db.execute(sql`
        select pg_relation_size('rate_limits')::float8 as heap,
               pg_total_relation_size('rate_limits')::float8 as total`),
    )[0]!;
  const fill = () =>
    t.database.db.execute(sql`
      insert into rate_limits (key, points, expire)
      select 'client-' || g || '-' || random(), 1, now() from generate_series(1, 5000) g`);
  const empty = () => t.database.db.execute(sql`delete from rate_limits`);

  it('gives the space of deleted rows back to new ones, which PGlite never does alone', async () => {
    await fill();
    const first = await sizes();
    await empty();
    await fill();
    // Nothing reclaimed the 5,000 deleted rows: the table doubled.
    expect((await sizes()).heap).toBeGreaterThan(first.heap * 1.9);

    const totals: number[] = [];
    for (let round = 0; round < 4; round++) {
      await empty();
      const runs = await maintainTables(t.database.db);
      expect(runs).toContainEqual(expect.objectContaining({ table: 'rate_limits', action: 'vacuum' }));
      await fill();
      // The same 5,000 rows again, in the pages the deleted ones left.
      expect((await sizes()).heap).toBe(first.heap);
      totals.push((await sizes()).total);
    }
    // Index pages freed by one vacuum are reused after the next: the whole stops growing.
    expect(totals[3]).toBe(totals[2]);
    // Done (the 5,000 inserts made it due again): nothing is due until the table changes.
    expect((await maintainTables(t.database.db)).map((run) => run.table)).toContain('rate_limits');
    expect((await maintainTables(t.database.db)).map((run) => run.table)).not.toContain('rate_limits');
  });

  it('analyzes a table whose rows changed, so plans see its size', async () => {
    await t.database.db.execute(sql`update rate_limits set points = points + 1`);
    const runs = await maintainTables(t.database.db);
    expect(runs).toContainEqual(expect.objectContaining({ table: 'rate_limits' }));
    const [stats] = rowsOf<{ analyzed: string | null }>(
      await t.database.db.execute(
        sql`select coalesce(last_analyze, last_autoanalyze)::text as analyzed from pg_stat_user_tables where relname = 'rate_limits'`,
      ),
    );
    expect(stats?.analyzed).toBeTruthy();
  });
});
