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
  /** Migrations the database has that this build does not know: a newer release applied them. */
  unknown: number;
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
    const known = new Set(migrations.map((migration) => migration.hash));
    const unknown = [...applied].filter((hash) => !known.has(hash)).length;
    let count = 0;
    for (const migration of migrations) {
      if (applied.has(migration.hash)) continue;
      for (const statement of migration.sql) {
        if (statement.trim()) await tx.execute(sql.raw(statement));
      }
      await tx.execute(sql`insert into convene_migrations (hash) values (${migration.hash})`);
      count += 1;
    }
    return { applied: count, total: migrations.length, unknown };
  });
}

/** What a run that applied migrations says (an upgrade's audit trail), or undefined for none. */
export const migratedMessage = ({ applied, total }: Migrated): string | undefined =>
  applied === 0
    ? undefined
    : `applied ${applied} database migration${applied === 1 ? '' : 's'} (${total} in all)`;

/**
 * What a start on a database a newer release migrated says (a rollback, an old node started by
 * mistake during an upgrade), or undefined. It still starts: during a rolling upgrade the old
 * nodes run on the new schema until they are replaced, which the migrations allow unless their
 * release notes say otherwise.
 */
export const newerSchemaMessage = ({ unknown }: Migrated): string | undefined =>
  unknown === 0
    ? undefined
    : `the database has ${unknown} migration${unknown === 1 ? '' : 's'} this release does not know: a newer release migrated it. ` +
      'Run that release (or newer) on every node; this one may misread what it changed';

/** postgres.js returns an array of rows, PGlite an object with `rows`: read either. */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}
