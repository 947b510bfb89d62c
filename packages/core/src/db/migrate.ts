import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { Db } from './types';

export const migrationsFolder = join(dirname(fileURLToPath(import.meta.url)), '../../drizzle');

/** What a migration run did: how many migrations it applied, of how many there are. */
export interface Migrated {
  applied: number;
  total: number;
}

/**
 * Applies the committed drizzle-kit migrations, identically on PGlite and PostgreSQL. Several
 * nodes may start at once: an advisory lock held for the transaction serialises them.
 */
export async function migrate(db: Db): Promise<Migrated> {
  const migrations = readMigrationFiles({ migrationsFolder });
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(726354, 1)`);
    await tx.execute(
      sql`create table if not exists convene_migrations (hash text primary key, applied_at timestamptz not null default now())`,
    );
    const applied = new Set(
      rowsOf<{ hash: string }>(await tx.execute(sql`select hash from convene_migrations`)).map((r) => r.hash),
    );
    let count = 0;
    for (const migration of migrations) {
      if (applied.has(migration.hash)) continue;
      for (const statement of migration.sql) {
        if (statement.trim()) await tx.execute(sql.raw(statement));
      }
      await tx.execute(sql`insert into convene_migrations (hash) values (${migration.hash})`);
      count += 1;
    }
    return { applied: count, total: migrations.length };
  });
}

/** What a run that applied migrations says (an upgrade's audit trail), or undefined for none. */
export const migratedMessage = ({ applied, total }: Migrated): string | undefined =>
  applied === 0
    ? undefined
    : `applied ${applied} database migration${applied === 1 ? '' : 's'} (${total} in all)`;

/** postgres.js returns an array of rows, PGlite an object with `rows`: read either. */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}
