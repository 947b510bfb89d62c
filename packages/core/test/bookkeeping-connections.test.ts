import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { BOOKKEEPING_CONNECTIONS, bookkeepingDbOf, type Db, rowsOf } from '../src/db';
import type { Deps } from '../src/deps';
import { SqlRateLimiter } from '../src/infra/rate-limiter';
import { recordPresence } from '../src/participants/record-presence';
import { useSeededDatabase } from './seed';

/** The last statement of every other backend of the test database, with its connection's name. */
const backends = async (db: Db) =>
  rowsOf<{ application_name: string; query: string }>(
    await db.execute(sql`
      select application_name, query from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid()`),
  );

describe('the connections of bookkeeping', () => {
  const seeded = useSeededDatabase(1);

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'count requests and note presence on connections that commit without waiting for the disk',
    async () => {
      /** The last statements of the bookkeeping connections (one at a time: the last shows). */
      const ranThere = async () => {
        const own = (await backends(seeded.db)).filter((b) => b.application_name === 'convene-bookkeeping');
        expect(own.length).toBeGreaterThan(0);
        expect(own.length).toBeLessThanOrEqual(BOOKKEEPING_CONNECTIONS);
        return own.map((b) => b.query.replace(/\s+/g, ' ').trim());
      };
      const limiter = new SqlRateLimiter(seeded.db, { max: 10, windowSeconds: 60 });
      const decision = await limiter.consume('address-1', new Date());
      expect(decision).toMatchObject({ allowed: true, remaining: 9 });
      expect((await ranThere()).some((q) => q.startsWith('with rl_source as'))).toBe(true);
      const now = new Date();
      await recordPresence({
        deps: { db: seeded.db, clock: { now: () => now } } as unknown as Deps,
        key: 'a-key',
      });
      expect((await ranThere()).some((q) => q.startsWith('update participants set last_seen_at'))).toBe(true);
      // Set by these connections themselves, whatever the server's configuration says.
      const setting = rowsOf<{ setting: string; source: string }>(
        await bookkeepingDbOf(seeded.db).execute(
          sql`select setting, source from pg_settings where name = 'synchronous_commit'`,
        ),
      );
      expect(setting).toEqual([{ setting: 'off', source: 'client' }]);
      // The pool's own connections keep the server's setting: a send waits for the disk.
      const pool = rowsOf<{ source: string }>(
        await seeded.db.execute(sql`select source from pg_settings where name = 'synchronous_commit'`),
      );
      expect(pool[0]!.source).not.toBe('client');
    },
  );

  it('keeps its books on the database itself where it has one connection (PGlite)', () => {
    expect(bookkeepingDbOf(seeded.db) === seeded.db).toBe(seeded.url === undefined);
  });
});
