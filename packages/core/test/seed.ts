import { sql } from 'drizzle-orm';
import { afterAll, beforeAll } from 'vitest';
import type { Db } from '../src/db';
import { openTestDatabase, type TestDatabase } from '../src/testing';

/** The id of seeded space `n` (1-based). */
export const seededSpaceId = (n: number): string => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/**
 * `count` open private spaces, each with one active participant whose key hash is `hash-<n>`, then
 * analyzed, as a database in use would be.
 */
export async function seedSpaces(db: Db, count: number): Promise<void> {
  await db.execute(sql`
    insert into spaces (id, name, description, privacy, ttl_seconds, created_at, expires_at)
    select ('00000000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid, 'space ' || n, '', 'private',
      86400, now(), now() + interval '1 day'
    from generate_series(1, ${count}) as n`);
  await db.execute(sql`
    insert into participants (space_id, id, name, status, key_hash, created_at, updated_at)
    select ('00000000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid,
      ('00000000-0000-4000-9000-' || lpad(n::text, 12, '0'))::uuid, 'p' || n, 'active', 'hash-' || n,
      now(), now()
    from generate_series(1, ${count}) as n`);
  await db.execute(sql`analyze spaces`);
  await db.execute(sql`analyze participants`);
}

/**
 * A test database with `count` seeded spaces (seedSpaces) for the tests of the enclosing
 * `describe`: opened before them, closed after them. Read `db` and `url` inside the tests.
 */
export function useSeededDatabase(count: number): { readonly db: Db; readonly url: string | undefined } {
  let t: TestDatabase | undefined;
  beforeAll(async () => {
    t = await openTestDatabase();
    await seedSpaces(t.database.db, count);
  });
  afterAll(() => t?.close());
  const opened = (): TestDatabase => {
    if (!t) throw new Error('the seeded database is opened before the tests run');
    return t;
  };
  return {
    get db() {
      return opened().database.db;
    },
    get url() {
      return opened().url;
    },
  };
}
