import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  bookkeepingDbOf,
  IDLE_IN_TRANSACTION_TIMEOUT_MS,
  openDatabase,
  rowsOf,
  sendingDbOf,
} from '../src/db';
import type { Db } from '../src/db/types';

const url = process.env.TEST_DATABASE_URL;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The session's setting, as PostgreSQL reports it (e.g. `15s`). */
const idleTimeout = async (db: Db) =>
  rowsOf<{ idle_in_transaction_session_timeout: string }>(
    await db.execute(sql`show idle_in_transaction_session_timeout`),
  )[0]?.idle_in_transaction_session_timeout;

describe.skipIf(!url)('a transaction left idle (its node frozen mid-transaction)', () => {
  it('is ended by PostgreSQL, so its locks stop holding the other nodes, and nothing of it commits', async () => {
    // The frozen node, with a short timeout; the other node with the service's own.
    const frozen = await openDatabase({ url, migrate: false, idleInTransactionTimeoutMs: 1_000 });
    const other = await openDatabase({ url, migrate: false });
    try {
      expect(await idleTimeout(other.db)).toBe(`${IDLE_IN_TRANSACTION_TIMEOUT_MS / 1000}s`);
      for (const db of [frozen.db, sendingDbOf(frozen.db), bookkeepingDbOf(frozen.db)])
        expect(await idleTimeout(db)).toBe('1s');

      const key = Math.floor(Math.random() * 1e9);
      await frozen.db.execute(sql`create table if not exists idle_probe (key bigint primary key)`);
      let locked!: () => void;
      const holding = new Promise<void>((resolve) => (locked = resolve));
      const stuck = frozen.db
        .transaction(async (tx) => {
          await tx.execute(sql`insert into idle_probe values (${key})`);
          await tx.execute(sql`select pg_advisory_xact_lock(${key})`);
          locked();
          // The node stops here, for longer than the timeout, then would go on.
          await pause(2_500);
          await tx.execute(sql`select 1`);
        })
        .then(
          () => 'committed',
          () => 'failed',
        );
      await holding;
      const started = Date.now();
      await other.db.transaction(async (tx) => {
        await tx.execute(sql`select pg_advisory_xact_lock(${key})`);
      });
      // Held about the timeout, not as long as the node stayed frozen.
      expect(Date.now() - started).toBeLessThan(2_300);
      expect(await stuck).toBe('failed');
      const rows = rowsOf(await other.db.execute(sql`select 1 from idle_probe where key = ${key}`));
      expect(rows).toEqual([]);
      // The frozen node's pool goes on with a new session.
      expect(await idleTimeout(frozen.db)).toBe('1s');
    } finally {
      await other.db.execute(sql`drop table if exists idle_probe`).catch(() => {});
      await frozen.close();
      await other.close();
    }
  });
});
