import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf, SENDING_CONNECTIONS, sendingDbOf } from '../src/db';
import { defaultCoreConfig } from '../src/deps';
import type { EventBus } from '../src/events/event-bus';
import { appendMessage } from '../src/messages/append-messages';
import { seededSpaceId, useSeededDatabase } from './seed';

const SPACE = seededSpaceId(1);
const KEY_HASH = 'hash-1';

/** A bus that NOTIFYs in SQL, as the PostgreSQL one does; nobody listens here. */
const bus: EventBus = {
  notifiesInSql: true,
  publish: async () => {},
  committed: () => {},
  subscribe: async () => async () => {},
};

describe('the connections of group-committed sends', () => {
  const seeded = useSeededDatabase(1);

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'runs sends on connections of their own, never round the whole pool',
    async () => {
      // A burst opens every connection of the pool (5 in tests).
      await Promise.all(Array.from({ length: 5 }, () => seeded.db.execute(sql`select pg_sleep(0.05)`)));
      const sent = 12;
      for (let i = 0; i < sent; i++) {
        const appended = await appendMessage(seeded.db, bus, defaultCoreConfig, {
          spaceId: SPACE,
          keyHash: KEY_HASH,
          messageId: randomUUID(),
          type: 'text',
          content: `message ${i}`,
          mentions: [],
          replyTo: null,
          names: [],
          now: new Date(),
          guard: undefined,
        });
        expect(appended).toMatchObject({ refused: null });
      }
      const backends = rowsOf<{ application_name: string; query: string }>(
        await seeded.db.execute(sql`
          select application_name, query from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid()`),
      );
      const sending = (b: { query: string }) => b.query.trimStart().startsWith('with input as materialized');
      const own = backends.filter((b) => b.application_name === 'convene-send');
      expect(own.length).toBeGreaterThan(0);
      expect(own.length).toBeLessThanOrEqual(SENDING_CONNECTIONS);
      expect(own.every(sending)).toBe(true);
      // The pool's connections ran the burst, and none of the sends.
      expect(backends.filter((b) => b.application_name === 'convene').length).toBeGreaterThanOrEqual(4);
      expect(backends.filter((b) => b.application_name === 'convene' && sending(b))).toEqual([]);
      const written = rowsOf<{ count: number }>(
        await seeded.db.execute(sql`select count(*)::int as count from messages where space_id = ${SPACE}`),
      );
      expect(written).toEqual([{ count: sent }]);
      expect(sendingDbOf(seeded.db)).not.toBe(seeded.db);
    },
  );

  it('sends on the database itself where it has one connection (PGlite)', async () => {
    expect(sendingDbOf(seeded.db) === seeded.db).toBe(seeded.url === undefined);
  });
});
