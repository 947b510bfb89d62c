import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../src/db';
import { PreparedStatement } from '../src/db/prepared';
import { leasedPglite, testDatabaseServerUrl } from '../src/testing';
import { seedSpaces } from './seed';

const countSpaces = new PreparedStatement<Record<string, never>>(
  'convene_test_count_spaces',
  sql`select count(*)::int as n from spaces`,
);

const count = async (db: Parameters<typeof countSpaces.execute>[0], table: string) =>
  rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int as n from ${sql.identifier(table)}`))[0]!.n;

// The server's tests lease PGlite databases (leasedPglite): a server's close empties its database
// and the next server gets it. What one server left must never reach the next. PGlite whatever
// the project: on the PGlite one only.
describe.skipIf(testDatabaseServerUrl() !== undefined)('a leased PGlite database', () => {
  it('is handed to the next lease empty, migrated, with a handle of its own', async () => {
    const first = await leasedPglite();
    await seedSpaces(first.db, 3);
    expect(await count(first.db, 'participants')).toBe(3);
    expect(rowsOf<{ n: number }>(await countSpaces.execute(first.db, {}))[0]!.n).toBe(3);
    await first.db.execute(sql`select pg_advisory_lock(4242)`);
    await first.close();

    const second = await leasedPglite();
    try {
      // The same PGlite database (a process opens one while one is idle), another handle.
      expect(second.db).not.toBe(first.db);
      expect(await count(second.db, 'spaces')).toBe(0);
      expect(await count(second.db, 'participants')).toBe(0);
      // Migrated still: drizzle's journal of applied migrations is kept.
      expect(
        rowsOf<{ n: number }>(
          await second.db.execute(sql`select count(*)::int as n from convene_migrations`),
        )[0]!.n,
      ).toBeGreaterThan(0);
      // A named statement the last handle prepared is prepared again under its name.
      expect(rowsOf<{ n: number }>(await countSpaces.execute(second.db, {}))[0]!.n).toBe(0);
      // Its advisory locks were released.
      expect(
        rowsOf<{ n: number }>(
          await second.db.execute(sql`select count(*)::int as n from pg_locks where locktype = 'advisory'`),
        )[0]!.n,
      ).toBe(0);
    } finally {
      await second.close();
    }
  });

  it('stops the listeners its server left at its close', async () => {
    const first = await leasedPglite();
    const heard: string[] = [];
    await first.listen('convene_test_leased', (payload) => heard.push(`first ${payload}`));
    await first.close();

    const second = await leasedPglite();
    try {
      await second.listen('convene_test_leased', (payload) => heard.push(`second ${payload}`));
      await second.db.execute(sql`select pg_notify('convene_test_leased', 'hello')`);
      await expect.poll(() => heard).toEqual(['second hello']);
    } finally {
      await second.close();
    }
  });

  it('is a database of its own for each lease held at once', async () => {
    const [a, b] = await Promise.all([leasedPglite(), leasedPglite()]);
    try {
      await seedSpaces(a.db, 2);
      expect(await count(a.db, 'spaces')).toBe(2);
      expect(await count(b.db, 'spaces')).toBe(0);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
