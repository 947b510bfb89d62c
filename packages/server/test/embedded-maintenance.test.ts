import { rowsOf } from '@convene/core';
import { sql } from 'drizzle-orm';
import { expect, it } from 'vitest';
import { onPostgres, withServer } from './helpers';

// PostgreSQL runs its own autovacuum; the embedded database has the server's.
it.skipIf(onPostgres())('vacuums the embedded database’s churned tables while it runs', async () => {
  await withServer({ config: { embeddedMaintenanceIntervalMs: 100 } }, async ({ srv }) => {
    const { db } = srv.server.database;
    // Rows written and deleted, as expired rate-limit windows are.
    await db.execute(sql`
      insert into rate_limits (key, points, expire)
      select 'client-' || g, 1, now() from generate_series(1, 500) g`);
    await db.execute(sql`delete from rate_limits where key like 'client-%'`);
    const vacuumed = async () =>
      rowsOf<{ at: string | null }>(
        await db.execute(
          sql`select last_vacuum::text as at from pg_stat_user_tables where relname = 'rate_limits'`,
        ),
      )[0]?.at ?? null;
    await expect.poll(vacuumed, { timeout: 5_000 }).not.toBeNull();
  });
});
