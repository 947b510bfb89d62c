// What README's "Running in production" says a node holds of PostgreSQL: at most 19 connections
// (a pool of 10, 2 sending, 3 bookkeeping, 3 listening, 1 watching for stalled sessions), by
// application_name (trial s26, finding 4).
import { rowsOf } from '@convene/core';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { expectOk, onPostgres, useServer } from './helpers';

describe.runIf(onPostgres())('a node on PostgreSQL', () => {
  const { srv, h } = useServer();

  it('holds at most 19 connections to its database, whatever its load: 10 + 2 + 3 + 3 listening + 1', async () => {
    const space = await h.createSpace();
    const stream = new AbortController();
    // Held (and read) until the count: fetch cancels the body of a Response collected as garbage,
    // which would close the stream before then.
    const open = await fetch(`${srv.url}/hub/space/${space.spaceId}/messages/stream?key=${space.ownerKey}`, {
      signal: stream.signal,
    });
    // Enough at once to open every pool: reads, sends (their own connections) and counts.
    const answers = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        i % 3 === 0
          ? h.post(`/hub/space/${space.spaceId}/messages`, {
              key: space.ownerKey,
              body: { content: `m${i}` },
            })
          : h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey }),
      ),
    );
    for (const res of answers) expectOk(res);
    const rows = rowsOf<{ application_name: string; n: number | string }>(
      await srv.server.database.db.execute(sql`
        select application_name, count(*) as n from pg_stat_activity
        where datname = current_database() group by 1`),
    );
    expect(open.status).toBe(200);
    stream.abort();
    const held = Object.fromEntries(rows.map((r) => [r.application_name, Number(r.n)]));
    expect(held['convene-listen']).toBe(3);
    expect(held.convene).toBeLessThanOrEqual(10);
    expect(held['convene-send'] ?? 0).toBeLessThanOrEqual(2);
    expect(held['convene-bookkeeping'] ?? 0).toBeLessThanOrEqual(3);
    expect(held['convene-watch'] ?? 0).toBeLessThanOrEqual(1);
    // No connection of another kind: a new one belongs in README's count.
    for (const name of Object.keys(held))
      expect(['convene', 'convene-send', 'convene-bookkeeping', 'convene-listen', 'convene-watch']).toContain(
        name,
      );
    expect(Object.values(held).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(19);
  });
});
