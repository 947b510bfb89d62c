import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { DataDirInUseError, migrate, openDatabase, rowsOf } from '../src/db';
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

  it('refuses a second server on the same PGlite data directory, and takes over a stale lock', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'convene-lock-'));
    dirs.push(dir);
    const first = await openDatabase({ dataDir: dir });
    await expect(openDatabase({ dataDir: dir })).rejects.toThrow(DataDirInUseError);
    await expect(openDatabase({ dataDir: dir })).rejects.toThrow(dir);
    await first.close();
    const again = await openDatabase({ dataDir: dir });
    await again.close();
  });
});
