import { randomUUID } from 'node:crypto';
import { FakeClock, rowsOf } from '@convene/core';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import type { ServerConfig } from '../src/env';
import { type ApiResponse, effectRoutes, expectError, expectOk, onPostgres, useServer } from './helpers';

const replayed = (res: ApiResponse) => res.headers.get('idempotency-replayed');

describe.runIf(onPostgres())('two nodes on one PostgreSQL', () => {
  const effects = effectRoutes();
  const clock = new FakeClock();
  const config: Partial<ServerConfig> = {
    rateLimitMax: 4,
    pageRateLimitMax: 4,
    rateLimitWindowSeconds: 60,
    idempotencyWaitMs: 1_500,
  };
  const { srv: nodeA, h: a } = useServer({ routes: effects.register, clock, config });
  const { srv: nodeB, h: b } = useServer(() => ({
    routes: effects.register,
    clock,
    config,
    databaseUrl: nodeA.databaseUrl as string,
  }));
  /**
   * A live owner key (only a working credential is a client of its own); the window of the
   * address that created it then ends, so every test starts with fresh windows.
   */
  const newKey = async () => {
    const { ownerKey } = await a.createSpace();
    clock.advance(60_000);
    return ownerKey;
  };
  /** A route that reads the key (only there is it the client): the space's own getSpace. */
  const newSpace = async () => {
    const { spaceId, ownerKey } = await a.createSpace();
    clock.advance(60_000);
    return { key: ownerKey, path: `/hub/space/${spaceId}` };
  };

  it('share one rate-limit window per client', async () => {
    const { key, path } = await newSpace();
    const remaining: (string | null)[] = [];
    for (const node of [a, b, a, b]) {
      const res = await node.get(path, { key });
      expectOk(res);
      remaining.push(res.headers.get('ratelimit-remaining'));
    }
    expect(remaining).toEqual(['3', '2', '1', '0']);
    const onA = await a.get(path, { key });
    const onB = await b.get(path, { key });
    expectError(onA, 429);
    expectError(onB, 429);
    expect(onA.headers.get('retry-after')).toBe('60');
    clock.advance(60_000);
    expectOk(await b.get(path, { key }));
    expect((await a.get(path, { key })).headers.get('ratelimit-remaining')).toBe('2');
  });

  it("share the pages' budget of an address, apart from its API window", async () => {
    clock.advance(60_000);
    const remaining: (string | null)[] = [];
    for (const node of [a, b, a, b]) {
      const res = await node.get(`/avatar/${randomUUID()}.svg`);
      expectOk(res);
      remaining.push(res.headers.get('ratelimit-remaining'));
    }
    expect(remaining).toEqual(['3', '2', '1', '0']);
    expectError(await a.get('/web/style.css'), 429);
    expectError(await b.get(`/space/${randomUUID()}`), 429);
    const api = await b.get('/.well-known/deprecation-policy');
    expectOk(api);
    expect(api.headers.get('ratelimit-remaining')).toBe('3');
    clock.advance(60_000);
  });

  it('count concurrent requests on both nodes exactly', async () => {
    const { key, path } = await newSpace();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).get(path, { key })),
    );
    expect(answers.filter((r) => r.status === 200)).toHaveLength(4);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(6);
  });

  it('replay on one node a write made on the other', async () => {
    const space = await a.createSpace();
    const headers = { 'Idempotency-Key': randomUUID() };
    const first = await a.post(`/hub/space/${space.spaceId}/invite`, { key: space.ownerKey, headers });
    expectOk(first);
    const retry = await b.post(`/hub/space/${space.spaceId}/invite`, { key: space.ownerKey, headers });
    expectOk(retry);
    expect(replayed(retry)).toBe('true');
    // The same answer, in the URLs of the node that gives it.
    expect(retry.body).toEqual(JSON.parse(first.text.replaceAll(nodeA.url, nodeB.url)));
    const rows = rowsOf<{ n: number | string }>(
      await nodeA.server.database.db.execute(
        sql`select count(*) as n from invitations where space_id = ${space.spaceId}`,
      ),
    );
    expect(Number(rows[0]?.n)).toBe(1);
  });

  it('run a duplicate sent to both nodes at once only once', async () => {
    const gate = effects.hold('both');
    const key = await newKey();
    const headers = { 'Idempotency-Key': randomUUID() };
    const onA = a.post('/test/effect/both', { key, body: { x: 1 }, headers });
    const onB = b.post('/test/effect/both', { key, body: { x: 1 }, headers });
    await gate.entered;
    await new Promise((r) => setTimeout(r, 200));
    gate.release();
    const answers = await Promise.all([onA, onB]);
    expect(effects.runs('both')).toBe(1);
    expect(answers.map((r) => r.status)).toEqual([201, 201]);
    expect(answers[0]?.body).toEqual(answers[1]?.body);
    expect(answers.map(replayed).filter((v) => v === 'true')).toHaveLength(1);
  });

  it('send one message for a duplicate sent to both nodes at once', async () => {
    const space = await a.createSpace();
    const body = { content: 'exactly once', type: 'text' };
    for (let round = 0; round < 5; round++) {
      clock.advance(60_000); // a fresh rate-limit window (4 requests) per round
      const headers = { 'Idempotency-Key': randomUUID() };
      const [x, y] = await Promise.all([
        a.post(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey, body, headers }),
        b.post(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey, body, headers }),
      ]);
      expectOk(x);
      expectOk(y);
      expect(x.body.messageId).toBe(y.body.messageId);
    }
    clock.advance(60_000);
    const list = await b.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    expect(list.body.messages).toHaveLength(5);
  });

  it('send one message for an MCP call with one idempotencyKey sent to both nodes at once', async () => {
    const space = await a.createSpace();
    const call = (node: typeof a, id: number, idempotencyKey: string) =>
      node.post('/mcp', {
        body: {
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: {
            name: 'send_message',
            arguments: {
              spaceId: space.spaceId,
              privateKey: space.ownerKey,
              content: 'once',
              idempotencyKey,
            },
          },
        },
        headers: { Accept: 'application/json, text/event-stream' },
      });
    for (let round = 0; round < 3; round++) {
      clock.advance(60_000); // a fresh rate-limit window (4 requests) per round
      const idempotencyKey = randomUUID();
      const [x, y] = await Promise.all([call(a, 1, idempotencyKey), call(b, 2, idempotencyKey)]);
      const results = [x, y].map((res) => res.body.result);
      for (const result of results) expect(result.isError, JSON.stringify(result)).toBeUndefined();
      expect(results[0].structuredContent.messageId).toBe(results[1].structuredContent.messageId);
      expect(results.filter((r) => r._meta?.['convene/idempotentReplay'])).toHaveLength(1);
    }
    clock.advance(60_000);
    const list = await b.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    expect(list.body.messages).toHaveLength(3);
  });

  it('answer 409 on the other node while the first is still running past the wait', async () => {
    const gate = effects.hold('slow');
    const key = await newKey();
    const headers = { 'Idempotency-Key': randomUUID() };
    const first = a.post('/test/effect/slow', { key, body: {}, headers });
    await gate.entered;
    expectError(await b.post('/test/effect/slow', { key, body: {}, headers }), 409);
    gate.release();
    expect((await first).status).toBe(201);
    expect(replayed(await b.post('/test/effect/slow', { key, body: {}, headers }))).toBe('true');
    expect(effects.runs('slow')).toBe(1);
  });
});
