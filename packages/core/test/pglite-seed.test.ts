import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { afterAll, describe, expect, it } from 'vitest';
import { type Database, migrate, migrationsFolder, openDatabase, rowsOf, writePgliteSeed } from '../src/db';
import { testDatabaseServerUrl } from '../src/testing';

/** The cluster's system identifier: initdb draws a new one for every cluster it makes. */
const identifierOf = async (db: Database['db']) =>
  rowsOf<{ id: string }>(
    await db.execute(sql`select system_identifier::text as id from pg_control_system()`),
  )[0]!.id;

const spacesIn = async (db: Database['db']) =>
  rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int as n from spaces`))[0]!.n;

// A new embedded database starts from the build's snapshot of a new cluster, not from initdb.
// PGlite whatever the project: on the PGlite one only.
describe.skipIf(testDatabaseServerUrl() !== undefined)('a new embedded database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'convene-seed-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("is the build's snapshot, migrated already, in a new data directory and in memory; an existing one stays its own", async () => {
    const file = await writePgliteSeed();
    const snapshot = new PGlite({ loadDataDir: new Blob([readFileSync(file)]) });
    const seeded = (
      await snapshot.query<{ id: string }>('select system_identifier::text as id from pg_control_system()')
    ).rows[0]!.id;
    await snapshot.close();

    const migrated: string[] = [];
    const onDisk = await openDatabase({ dataDir: join(dir, 'data'), onMigrated: (m) => migrated.push(m) });
    expect(await identifierOf(onDisk.db)).toBe(seeded);
    expect(await spacesIn(onDisk.db)).toBe(0);
    // Every migration of this build is in it: the start applied none.
    expect(migrated).toEqual([]);
    expect(await migrate(onDisk.db)).toEqual({
      applied: 0,
      total: readMigrationFiles({ migrationsFolder }).length,
      unknown: 0,
    });
    await onDisk.db.execute(sql`create table kept (n int)`);
    await onDisk.close();

    // Opened again, it is the cluster it was (the snapshot is never laid over a cluster).
    const again = await openDatabase({ dataDir: join(dir, 'data') });
    expect(await identifierOf(again.db)).toBe(seeded);
    expect(rowsOf(await again.db.execute(sql`select * from kept`))).toEqual([]);
    await again.close();

    const inMemory = await openDatabase({ url: 'memory://' });
    expect(await identifierOf(inMemory.db)).toBe(seeded);
    expect(await spacesIn(inMemory.db)).toBe(0);
    await inMemory.close();
  });
});
