import { sql } from 'drizzle-orm';
import type { Db } from '../src/db';

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
