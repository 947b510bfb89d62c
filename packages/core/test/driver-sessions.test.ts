import postgres from 'postgres';
import { describe, expect, it } from 'vitest';

// postgres.js (patched, patches/postgres@3.4.9.patch): a session PostgreSQL ends while a query is
// in flight (a fast shutdown or restart, pg_terminate_backend: FATAL 57P01) must take its error
// with it. The driver kept it, and the next session of that connection, opened seconds or minutes
// later, rejected its first query with it: a 503 long after the database was back.
describe.skipIf(!process.env.TEST_DATABASE_URL)('a database session ended under a query', () => {
  it('leaves nothing behind for the next session of its connection', async () => {
    const url = process.env.TEST_DATABASE_URL!;
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    const admin = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const { pid } = (await sql<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!;
      const inFlight = sql`select pg_sleep(5)`.then(
        () => undefined,
        (error: { code?: string }) => error,
      );
      // The query is out when its session is ended.
      for (let i = 0; i < 100; i++) {
        const { active } = (
          await admin<{ active: boolean }[]>`
            select exists (select 1 from pg_stat_activity where pid = ${pid} and query like 'select pg_sleep%')
              as active`
        )[0]!;
        if (active) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await admin`select pg_terminate_backend(${pid})`;
      const ended = await inFlight;
      expect(ended).toBeDefined();
      // The same connection, in a new session: its queries are answered.
      for (let i = 0; i < 3; i++) expect(await sql`select ${i}::int as n`).toEqual([{ n: i }]);
      const again = (await sql<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid;
      expect(again).not.toBe(pid);
    } finally {
      await sql.end({ timeout: 1 });
      await admin.end({ timeout: 1 });
    }
  });
});
