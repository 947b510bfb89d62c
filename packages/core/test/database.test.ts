import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { afterAll, describe, expect, it } from 'vitest';
import { DataDirInUseError, migrate, migrationsFolder, openDatabase, rowsOf } from '../src/db';
import { openTestDatabase } from '../src/testing';

describe('database', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('migrates idempotently and has every table', async () => {
    const t = await openTestDatabase();
    try {
      await migrate(t.database.db);
      const rows = rowsOf<{ table_name: string }>(
        await t.database.db.execute(
          sql`select table_name from information_schema.tables where table_schema = 'public'`,
        ),
      );
      expect(rows.map((r) => r.table_name)).toEqual(
        expect.arrayContaining([
          'spaces',
          'participants',
          'invitations',
          'messages',
          'space_events',
          'artifacts',
          'artifact_versions',
        ]),
      );
    } finally {
      await t.close();
    }
  });

  // A new database's tables are small: probing by key must still be the plan, or the plans each
  // session keeps scan whole tables once they have grown (PLANNER_SETTINGS).
  it('plans a probe by key on a small table, not a scan of it', async () => {
    const t = await openTestDatabase();
    try {
      const plan = await t.database.db.transaction(async (tx) => {
        await tx.execute(sql`create temporary table probe_rows (key text primary key, n int) on commit drop`);
        await tx.execute(sql`insert into probe_rows select 'k' || n, n from generate_series(1, 300) as n`);
        await tx.execute(sql`analyze probe_rows`);
        return rowsOf<{ 'QUERY PLAN': string }>(
          await tx.execute(sql`explain select n from probe_rows where key = 'k7'`),
        )
          .map((row) => row['QUERY PLAN'])
          .join('\n');
      });
      expect(plan).toMatch(/Index Scan using probe_rows_pkey/);
    } finally {
      await t.close();
    }
  });

  // Six opens of an embedded database: on a busy two-core machine, 30 s was seen to run out.
  it('refuses a second server on the same PGlite data directory, and takes over a stale lock', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'convene-lock-'));
    dirs.push(dir);
    const migrated: string[] = [];
    const first = await openDatabase({ dataDir: dir, onMigrated: (message) => migrated.push(message) });
    await expect(openDatabase({ dataDir: dir })).rejects.toThrow(DataDirInUseError);
    await expect(openDatabase({ dataDir: dir })).rejects.toThrow(dir);
    await first.close();
    const again = await openDatabase({ dataDir: dir, onMigrated: (message) => migrated.push(message) });
    await again.close();
    // Said when a start applies migrations (an upgrade's audit trail), and only then: a new
    // database is the build's snapshot, migrated already.
    expect(migrated).toEqual([]);
    // A cluster no migration has touched yet (initdb's, without the snapshot) gets them all.
    const bare = mkdtempSync(join(tmpdir(), 'convene-bare-'));
    dirs.push(bare);
    const initdb = new PGlite(bare);
    await initdb.waitReady;
    await initdb.close();
    const upgraded = await openDatabase({ dataDir: bare, onMigrated: (message) => migrated.push(message) });
    await upgraded.close();
    const total = readMigrationFiles({ migrationsFolder }).length;
    expect(total).toBeGreaterThan(10);
    expect(migrated).toEqual([`applied ${total} database migrations (${total} in all)`]);

    // A database a newer release migrated (one migration this build does not know): it starts,
    // and says so, once per start.
    const newer = await openDatabase({ dataDir: dir });
    await newer.db.execute(sql`insert into convene_migrations (hash) values ('from-a-newer-release')`);
    await newer.close();
    const warned: string[] = [];
    const old = await openDatabase({
      dataDir: dir,
      onMigrated: (message) => migrated.push(message),
      onNewerSchema: (message) => warned.push(message),
    });
    await old.close();
    expect(warned).toEqual([
      'the database has 1 migration this release does not know: a newer release migrated it. Run that release (or newer) on every node; this one may misread what it changed',
    ]);
    expect(migrated).toHaveLength(1);
  }, 90_000);
});
