import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type Database,
  migrate,
  migrationsFolder,
  openDatabase,
  rowsOf,
  unpackPgliteSeed,
  writePgliteSeed,
} from '../src/db';
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

  it('is written into a new data directory private, its PG_VERSION last: a start stopped midway unpacks again', async () => {
    await writePgliteSeed();
    const data = join(dir, 'stopped');
    mkdirSync(data);
    expect(unpackPgliteSeed(data)).toBe(true);
    expect(statSync(join(data, 'PG_VERSION')).mode & 0o777).toBe(0o600);
    expect(statSync(join(data, 'global')).mode & 0o777).toBe(0o700);
    const written = readdirSync(data, { recursive: true }).map(
      (f) => statSync(join(data, String(f))).mtimeMs,
    );
    expect(statSync(join(data, 'PG_VERSION')).mtimeMs).toBe(Math.max(...written));
    // As a start stopped before the end leaves it: no PG_VERSION, a file cut short.
    rmSync(join(data, 'PG_VERSION'));
    truncateSync(join(data, 'global/pg_control'), 10);
    const opened = await openDatabase({ dataDir: data });
    expect(await spacesIn(opened.db)).toBe(0);
    await opened.close();
    expect(existsSync(join(data, 'PG_VERSION'))).toBe(true);
  });
});
