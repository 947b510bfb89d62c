import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, rowsOf } from '../src/db';
import { PreparedStatement } from '../src/db/prepared';
import { openTestDatabase, type TestDatabase } from '../src/testing';

// A statement with a parameter of each kind the hot paths bind (arrays, text, timestamptz,
// boolean, null) and a column of each kind they read back.
const echo = new PreparedStatement<{
  ids: string[];
  names: (string | null)[];
  at: string;
  flag: boolean;
  missing: string | null;
}>(
  'convene_test_echo',
  sql`
  select t.id, t.name, t.ord, ${sql.placeholder('at')}::timestamptz as at,
    ${sql.placeholder('flag')}::boolean as flag, ${sql.placeholder('missing')}::text as missing,
    json_build_object('name', t.name, 'n', t.ord) as doc, t.ord::bigint * 1000 as big
  from unnest(${sql.placeholder('ids')}::uuid[], ${sql.placeholder('names')}::text[])
    with ordinality as t(id, name, ord)
  order by t.ord
`,
);

const failing = new PreparedStatement<{ value: string }>(
  'convene_test_failing',
  sql`select ${sql.placeholder('value')}::int as n`,
);

const values = {
  ids: ['6f1c1a52-3a59-4f7e-9c2a-1d2e3f4a5b6c', '0b7e2d94-5c1a-4e8b-8f3d-2a1b3c4d5e6f'],
  names: ['it\'s "quoted", {braced}\\', null],
  at: '2026-11-23T10:00:00.123456Z',
  flag: true,
  missing: null,
};

describe('PreparedStatement', () => {
  let t: TestDatabase;
  let database: Database;
  beforeAll(async () => {
    t = await openTestDatabase();
    database = t.database;
  });
  afterAll(() => t.close());

  it('answers what drizzle answers for the same statement, values and types alike', async () => {
    const expected = rowsOf(
      await database.db.execute(
        sql`
        select t.id, t.name, t.ord, ${values.at}::timestamptz as at, ${values.flag}::boolean as flag,
          ${values.missing}::text as missing,
          json_build_object('name', t.name, 'n', t.ord) as doc, t.ord::bigint * 1000 as big
        from unnest(${`{${values.ids.join(',')}}`}::uuid[], ${sql.raw(
          `array[${values.names.map((n) => (n === null ? 'null' : `'${n.replaceAll("'", "''")}'`)).join(',')}]::text[]`,
        )}) with ordinality as t(id, name, ord)
        order by t.ord`,
      ),
    );
    const rows = rowsOf<Record<string, unknown>>(await echo.execute(database.db, values));
    expect(rows).toEqual(expected);
    expect(rows.map((r) => r.name)).toEqual(values.names);
    expect(rows[0]!.doc).toEqual({ name: values.names[0], n: 1 });
    expect(rows[0]!.flag).toBe(true);
    expect(rows[0]!.missing).toBeNull();
  });

  // postgres.js keeps its own statement names, one per pooled connection; PGlite's one session
  // is ours to check.
  it.skipIf(process.env.TEST_DATABASE_URL)(
    "is prepared once in PGlite's session and planned once, then reused",
    async () => {
      for (let i = 0; i < 12; i++) await echo.execute(database.db, values);
      const [entry] = rowsOf<{ name: string; generic_plans: number | string; custom_plans: number | string }>(
        await database.db.execute(
          sql`select name, generic_plans, custom_plans from pg_prepared_statements where name = 'convene_test_echo'`,
        ),
      );
      expect(entry?.name).toBe('convene_test_echo');
      expect(Number(entry!.generic_plans) + Number(entry!.custom_plans)).toBeGreaterThanOrEqual(12);
      // PostgreSQL plans the first five calls for their values, then keeps one generic plan.
      expect(Number(entry!.custom_plans)).toBeLessThanOrEqual(5);
    },
  );

  // Left to choose, PostgreSQL planned the batched rate-limit statement anew on every call: the
  // pool's sessions keep one generic plan per statement instead (db/index.ts).
  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'keeps one generic plan per statement in every session of the PostgreSQL pool',
    async () => {
      const modes = await Promise.all(
        Array.from({ length: 12 }, async () =>
          rowsOf<{ plan_cache_mode: string }>(await database.db.execute(sql`show plan_cache_mode`)),
        ),
      );
      expect(new Set(modes.flat().map((r) => r.plan_cache_mode))).toEqual(new Set(['force_generic_plan']));
      const plans = await database.db.transaction(async (tx) => {
        for (let i = 0; i < 8; i++) await echo.execute(tx as unknown as Database['db'], values);
        return rowsOf<{ generic_plans: number | string; custom_plans: number | string }>(
          await tx.execute(
            sql`select generic_plans, custom_plans from pg_prepared_statements
              where statement like '%with ordinality as t(id, name, ord)%' and statement not like '%pg_prepared_statements%'`,
          ),
        );
      });
      expect(plans).toHaveLength(1);
      expect(Number(plans[0]!.custom_plans)).toBe(0);
      expect(Number(plans[0]!.generic_plans)).toBeGreaterThanOrEqual(8);
    },
  );

  it('reports a failing call as the database error and stays usable', async () => {
    const error = await failing.execute(database.db, { value: 'not a number' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code).toBe(
      '22P02',
    );
    expect(rowsOf(await failing.execute(database.db, { value: '42' }))).toEqual([{ n: 42 }]);
    expect(rowsOf(await database.db.execute(sql`select 1 as one`))).toEqual([{ one: 1 }]);
  });

  it('waits for a transaction in progress instead of running inside it', async () => {
    await database.db.execute(sql`create table if not exists prepared_probe (n int)`);
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let inserted!: () => void;
    const didInsert = new Promise<void>((resolve) => {
      inserted = resolve;
    });
    const transaction = database.db.transaction(async (tx) => {
      await tx.execute(sql`insert into prepared_probe values (1)`);
      inserted();
      await held;
      throw new Error('rolled back');
    });
    const read = new PreparedStatement<Record<string, never>>(
      'convene_test_probe',
      sql`select count(*)::int as n from prepared_probe`,
    );
    await didInsert;
    const counted = read.execute(database.db, {});
    // Time enough to run inside the open transaction, were it not kept out of it.
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    await expect(transaction).rejects.toThrow('rolled back');
    // Never sees the rolled-back row: on PGlite it ran after the transaction, on a server
    // on another connection.
    expect(rowsOf(await counted)).toEqual([{ n: 0 }]);
  });
});
