import { randomBytes, randomUUID } from 'node:crypto';
import { isDatabaseUnavailable, rowsOf } from '@convene/core';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { effectRoutes, expectError, onPostgres, useServer } from './helpers';
import { approvedLink, signup } from './helpers/accounts';

// When the database is away or slow: 503 with Retry-After, never 500, nothing half done, and
// logs that never carry a bound value (decisions.md, Abuse and faults). The fault suite
// (`pnpm test:faults`) restarts a real PostgreSQL under load; these pin each rule down.
const effects = effectRoutes();
const lines: string[] = [];
const secret = `secret-${randomBytes(8).toString('hex')}`;
const email = `${randomBytes(6).toString('hex')}@example.com`;
const { srv, h } = useServer(() => ({
  config: { requestTimeoutMs: 1500, logLevel: 'info' },
  logStream: { write: (line) => void lines.push(line) },
  routes: (app, server) => {
    effects.register(app, server);
    // What postgres.js throws when the server is gone, wrapped the way drizzle wraps it.
    app.get('/test/db-gone', async () => {
      const cause = Object.assign(new Error(`write CONNECTION_CLOSED 127.0.0.1:5432`), {
        code: 'CONNECTION_CLOSED',
      });
      throw Object.assign(new Error(`Failed query: select 1\nparams: ${secret}`), { cause });
    });
    app.get('/test/db-restarting', async () => {
      throw Object.assign(new Error('terminating connection due to administrator command'), {
        name: 'PostgresError',
        code: '57P01',
        severity: 'FATAL',
      });
    });
    // A real failing statement whose bound values are secrets.
    app.get('/test/db-fails', async () => {
      await server.database.db.execute(sql`select ${secret}::int, ${email}::text`);
    });
  },
}));

describe('the database unreachable', () => {
  it('answers 503 JSON with Retry-After, never 500', async () => {
    for (const path of ['/test/db-gone', '/test/db-restarting']) {
      const res = await h.get(path);
      expectError(res, 503);
      expect(res.headers.get('retry-after')).toBe('2');
      expect(res.body.error).toMatch(/retry/);
    }
  });

  it('is told apart from a bad request by the error, through every wrapper', () => {
    const wrap = (cause: unknown) => Object.assign(new Error('Failed query'), { cause });
    expect(isDatabaseUnavailable(wrap(Object.assign(new Error('x'), { code: 'ECONNREFUSED' })))).toBe(true);
    expect(isDatabaseUnavailable(wrap(Object.assign(new Error('x'), { code: '08006' })))).toBe(true);
    expect(isDatabaseUnavailable(wrap(Object.assign(new Error('x'), { code: '57P03' })))).toBe(true);
    // Out of file descriptors: no connection can be opened for now (an operator trial saw 500s).
    expect(isDatabaseUnavailable(wrap(Object.assign(new Error('x'), { code: 'EMFILE' })))).toBe(true);
    expect(isDatabaseUnavailable(wrap(Object.assign(new Error('x'), { errno: 'ENFILE' })))).toBe(true);
    expect(isDatabaseUnavailable(wrap(Object.assign(new Error('x'), { code: 'CONNECT_TIMEOUT' })))).toBe(
      true,
    );
    // A deadlock's victim and a serialization failure were rolled back whole: a retry runs alone
    // (a concurrency trial saw deadlocks answered 500).
    expect(isDatabaseUnavailable(wrap(Object.assign(new Error('x'), { code: '40P01' })))).toBe(true);
    expect(isDatabaseUnavailable(wrap(Object.assign(new Error('x'), { code: '40001' })))).toBe(true);
    // A constraint or a type error is the request's own fault, or a bug: not a 503.
    expect(isDatabaseUnavailable(wrap(Object.assign(new Error('x'), { code: '23505' })))).toBe(false);
    expect(isDatabaseUnavailable(wrap(Object.assign(new Error('x'), { code: '22P02' })))).toBe(false);
    expect(isDatabaseUnavailable(new Error('plain'))).toBe(false);
  });
});

describe('a request that cannot finish in time', () => {
  it('answers 503 with Retry-After, and a guarded write it held commits nothing', async () => {
    const gate = effects.hold('slow');
    const key = randomBytes(32).toString('hex');
    const headers = { 'Idempotency-Key': randomUUID() };
    const started = Date.now();
    const first = await h.post('/test/effect/slow', { key, body: {}, headers });
    expectError(first, 503);
    expect(first.headers.get('retry-after')).toBe('2');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    gate.release();
    // The write was told it failed: it rolled back, so its retry runs (and is not a replay).
    let retry = await h.post('/test/effect/slow', { key, body: {}, headers });
    for (let i = 0; retry.status === 409 && i < 20; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      retry = await h.post('/test/effect/slow', { key, body: {}, headers });
    }
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotency-replayed')).toBeNull();
    expect(effects.runs('slow')).toBe(2);
  });

  it('answers a send that went out when the database does, never 503 while it may still commit; a send that had not is 503 and never written', async () => {
    const space = await h.createSpace();
    const send = (content: string) =>
      h.post(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey, body: { content } });
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // The key verified (and so known to the rate limit) before the database stalls.
    expect((await send('before')).status).toBe(200);
    // The space's row held for 3 s (a long moderation transaction; on PGlite, its one connection):
    // the sends wait for it past their 1.5 s.
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const holder = srv.server.database.db.transaction(async (tx) => {
      await tx.execute(sql`select 1 from spaces where id = ${space.spaceId} for update`);
      // And the rate limit's counts (a database that answers nothing at all holds them too).
      await tx.execute(sql`lock table rate_limits in exclusive mode`);
      held();
      await pause(3_000);
    });
    await holding;
    const answers: Promise<Awaited<ReturnType<typeof send>> & { ms: number }>[] = [];
    // Apart, so that the process's sending statements go out one after another (a statement
    // out for 20 ms lets the next go), and the last ones queue behind them.
    for (let i = 0; i < 4; i++) {
      const started = Date.now();
      answers.push(send(`held ${i}`).then((res) => ({ ...res, ms: Date.now() - started })));
      await pause(100);
    }
    const settled = await Promise.all(answers);
    await holder;
    const { body } = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    const stored = (body.messages as { content: string }[]).map((m) => m.content);
    // Every 200 wrote its message once, every 503 wrote nothing.
    for (const [i, res] of settled.entries()) {
      expect([200, 503], `send ${i}`).toContain(res.status);
      expect(
        stored.filter((c) => c === `held ${i}`),
        `send ${i}: ${res.status}`,
      ).toHaveLength(res.status === 200 ? 1 : 0);
      // A 503 is said at its deadline, not once the database is back (its rate-limit count,
      // left to the statement that never ran, is not made then: it would wait on the database).
      if (res.status === 503) expect(res.ms, `send ${i}`).toBeLessThan(2_300);
    }
    // The first went out at once: it waited for the database, past its deadline, and was answered.
    expect(settled[0]!.status).toBe(200);
    expect(settled.some((res) => res.status === 503)).toBe(true);
    expect(lines.some((line) => line.includes('timed out while its write was committing'))).toBe(true);
  });

  it('answers 503 to a write without an Idempotency-Key that it held, and that write commits nothing', async () => {
    const space = await h.createSpace();
    const create = (name: string) =>
      h.post(`/hub/space/${space.spaceId}/artifact`, {
        key: space.ownerKey,
        body: { name, type: 'markdown', content: 'x' },
      });
    expect((await create('before')).status).toBe(200);
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const holder = srv.server.database.db.transaction(async (tx) => {
      await tx.execute(sql`select 1 from spaces where id = ${space.spaceId} for update`);
      held();
      await new Promise((resolve) => setTimeout(resolve, 2_500));
    });
    await holding;
    const res = await create('held');
    expectError(res, 503);
    await holder;
    // Told it did not happen, and it did not: its retry is the one that creates it.
    const names = async () =>
      (
        (await h.get(`/hub/space/${space.spaceId}/artifact`, { key: space.ownerKey })).body.artifacts as {
          name: string;
        }[]
      ).map((a) => a.name);
    expect(await names()).toEqual(['before']);
    expect((await create('held')).status).toBe(200);
    expect(await names()).toEqual(['before', 'held']);
  });

  it('answers 503 to an anonymous write it held, which commits nothing: a link poll keeps its token, a space or an account is not made', async () => {
    const link = await approvedLink(h, await signup(h));
    const account = {
      email: `held-${randomBytes(6).toString('hex')}@example.com`,
      password: 'a long password',
    };
    const poll = () => h.post('/hub/link/poll', { body: { deviceCode: link.deviceCode } });
    const spaces = async () =>
      Number(
        rowsOf<{ n: number | string }>(
          await srv.server.database.db.execute(sql`select count(*) as n from spaces`),
        )[0]?.n,
      );
    const before = await spaces();
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const holder = srv.server.database.db.transaction(async (tx) => {
      await tx.execute(
        sql`select 1 from link_requests where user_code = ${link.userCode.replace('-', '')} for update`,
      );
      await tx.execute(sql`lock table spaces, users in exclusive mode`);
      held();
      await new Promise((resolve) => setTimeout(resolve, 2_500));
    });
    await holding;
    const [polled, created, signedUp] = await Promise.all([
      poll(),
      h.post('/hub/space', { body: { name: 'held', description: 'held past its deadline' } }),
      h.post('/hub/auth/signup', { body: account }),
    ]);
    expectError(polled, 503);
    expectError(created, 503);
    expectError(signedUp, 503);
    await holder;
    // The account was not made: signing up again makes it (it was told the email was taken).
    const again = await h.post('/hub/auth/signup', { body: account });
    expect(again.status, again.text).toBe(201);
    // Told it did not happen, and it did not: the next poll collects the token, once.
    expect(await spaces()).toBe(before);
    const collected = await poll();
    expect(collected.status, collected.text).toBe(200);
    expect(collected.body).toMatchObject({ status: 'approved', token: expect.stringMatching(/^usr_/) });
    expect((await poll()).status).toBe(410);
  });

  it.runIf(onPostgres())(
    'answers a write whose commit outlasts its deadline when it commits, never 503: a link poll hands its token over, a space or an account is made once',
    async () => {
      const link = await approvedLink(h, await signup(h));
      const db = srv.server.database.db;
      // Every commit that changed a link request or made a space takes 2.5 s (a disk that stalls
      // on its flush), past the 1.5 s deadline; the statements themselves are quick.
      await db.execute(sql`
      create or replace function slow_commit() returns trigger language plpgsql
      as $$ begin perform pg_sleep(2.5); return null; end $$`);
      await db.execute(sql`
      create constraint trigger slow_link_commit after update on link_requests
      deferrable initially deferred for each row execute function slow_commit()`);
      await db.execute(sql`
      create constraint trigger slow_space_commit after insert on spaces
      deferrable initially deferred for each row execute function slow_commit()`);
      await db.execute(sql`
      create constraint trigger slow_user_commit after insert on users
      deferrable initially deferred for each row execute function slow_commit()`);
      const space = await h.createSpace();
      await db.execute(sql`
      create constraint trigger slow_artifact_commit after insert on artifacts
      deferrable initially deferred for each row execute function slow_commit()`);
      try {
        const [polled, created, guarded, signedUp] = await Promise.all([
          h.post('/hub/link/poll', { body: { deviceCode: link.deviceCode } }),
          h.post('/hub/space', { body: { name: 'slow', description: 'a commit past its deadline' } }),
          // A write under an Idempotency-Key commits with its record.
          h.post(`/hub/space/${space.spaceId}/artifact`, {
            key: space.ownerKey,
            headers: { 'Idempotency-Key': randomUUID() },
            body: { name: 'slow', type: 'markdown', content: 'x' },
          }),
          h.post('/hub/auth/signup', {
            body: {
              email: `slow-${randomBytes(6).toString('hex')}@example.com`,
              password: 'a long password',
            },
          }),
        ]);
        expect(signedUp.status, signedUp.text).toBe(201);
        expect(guarded.status, guarded.text).toBe(200);
        expect(polled.status, polled.text).toBe(200);
        expect(polled.body.token).toMatch(/^usr_/);
        expect(created.status, created.text).toBe(200);
        expect(lines.some((line) => line.includes('timed out while its write was committing'))).toBe(true);
      } finally {
        await db.execute(sql`drop trigger slow_link_commit on link_requests`);
        await db.execute(sql`drop trigger slow_space_commit on spaces`);
        await db.execute(sql`drop trigger slow_artifact_commit on artifacts`);
        await db.execute(sql`drop trigger slow_user_commit on users`);
      }
    },
  );

  it('leaves streams alone', async () => {
    const space = await h.createSpace();
    const controller = new AbortController();
    const res = await fetch(`${srv.listenUrl}/hub/space/${space.spaceId}/messages/stream`, {
      headers: { 'X-Private-Key': space.ownerKey },
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    await new Promise((resolve) => setTimeout(resolve, 1_800));
    // Still open after the timeout: a message sent now arrives.
    await h.post(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey, body: { content: 'late' } });
    let text = '';
    while (!text.includes('late')) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
  });
});

describe('logs', () => {
  it('never carry a bound value, a key or an email, even for a failing statement', async () => {
    const res = await h.get('/test/db-fails');
    expectError(res, 500);
    await h.get('/test/db-gone');
    const log = lines.join('\n');
    expect(log).toContain('database error 22P02');
    expect(log).not.toContain(secret);
    expect(log).not.toContain(email);
    expect(log).not.toContain('params:');
  });

  it('log an unavailable database without stack frames (one short line per request of a restart), a failure with them', async () => {
    const logged = (path: string) => {
      const from = lines.length;
      return h.get(path).then(() =>
        lines
          .slice(from)
          .map((line) => JSON.parse(line) as { level: number; err?: { stack?: string; cause?: unknown } })
          .find((line) => line.level >= 40 && line.err),
      );
    };
    for (const path of ['/test/db-gone', '/test/db-restarting']) {
      const line = await logged(path);
      expect(line?.level).toBe(40);
      expect(JSON.stringify(line?.err)).not.toMatch(/"stack":"[^"]/);
    }
    const failure = await logged('/test/db-fails');
    expect(failure?.level).toBe(50);
    expect(failure?.err?.stack).toMatch(/^\s+at /);
  });
});
