import { connect } from 'node:net';
import { ArtifactLockedError, UnavailableError } from '@convene/core';
import { describe, expect, it } from 'vitest';
import { type ApiResponse, startTestServer, useServer, withServer } from './helpers';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The server's log lines, parsed. */
function logOf(lines: string[]): {
  reqId?: string;
  level?: number;
  msg?: string;
  req?: { url?: string };
  res?: { statusCode?: number };
  err?: { message?: string };
}[] {
  return lines.flatMap((line) =>
    line
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
  );
}

const lines: string[] = [];
const { srv, h } = useServer({
  config: { logLevel: 'info' },
  logStream: { write: (line) => void lines.push(line) },
  routes: (app) => {
    app.get('/test/boom', async () => {
      throw new Error('an unexpected failure');
    });
    app.get('/test/locked', async () => {
      throw new ArtifactLockedError('11111111-1111-4111-8111-111111111111', '2030-01-01T00:10:00.000Z');
    });
  },
});

/** A request's log lines: Fastify's default writes two; Convene one, when it ends (http/request-log.ts). */
const REQUEST_LINES = new Set(['incoming request', 'request completed', 'request aborted']);

/**
 * Checks the answer's Request-Id: a fresh UUID, and the reqId of the request's one log line, which
 * names the request (redacted), its status and the time it took.
 */
async function expectLoggedId(
  res: ApiResponse | Response,
  status: number,
  { end = 'request completed' } = {},
): Promise<string> {
  expect(res.status).toBe(status);
  const id = res.headers.get('request-id');
  expect(id).toMatch(UUID);
  const logged = () => logOf(lines).filter((l) => l.reqId === id && REQUEST_LINES.has(l.msg ?? ''));
  await expect.poll(() => logged().length).toBe(1);
  expect(logged()[0]).toMatchObject({
    msg: end,
    req: { method: expect.any(String), url: expect.any(String) },
    res: { statusCode: status },
    responseTime: expect.any(Number),
  });
  return id!;
}

describe('Request-Id', () => {
  it('names every answer, success or error, with the id of its log line', async () => {
    const space = await h.createSpace();
    const answers: [ApiResponse, number][] = [
      [await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey }), 200], // a procedure
      [
        await h.post(`/hub/space/${space.spaceId}/messages`, {
          key: space.ownerKey,
          body: { content: 'hi' },
        }),
        200,
      ], // bound directly
      [await h.get('/openapi.json'), 200], // raw routes
      [await h.get('/.well-known/oauth-protected-resource'), 200],
      [await h.request('HEAD', '/api/health'), 200],
      [await h.post('/hub/space', { body: '{"name":', raw: true }), 400], // unparsable body
      [await h.post('/hub/space', { body: { name: '' } }), 400], // a contract violation
      [await h.get('/hub/space/%zz'), 400], // unroutable: Fastify's frameworkErrors
      [await h.get('/api/health', { headers: { 'API-Version': '7' } }), 400],
      [await h.get(`/hub/space/${space.spaceId}`), 401],
      [await h.get('/no/such/route'), 404],
      [await h.get('/hub/space/00000000-0000-4000-8000-000000000000', { key: space.ownerKey }), 404],
      [await h.get('/test/locked'), 423],
      [await h.get('/test/boom'), 500],
    ];
    const ids = new Set<string>();
    for (const [res, status] of answers) ids.add(await expectLoggedId(res, status));
    expect(ids.size).toBe(answers.length);
  });

  it('names the event stream and MCP answers, whose replies are taken over', async () => {
    const space = await h.createSpace();
    const controller = new AbortController();
    const stream = await fetch(`${srv.url}/hub/space/${space.spaceId}/messages/stream`, {
      headers: { 'X-Private-Key': space.ownerKey },
      signal: controller.signal,
    });
    expect(stream.headers.get('content-type')).toMatch(/text\/event-stream/);
    controller.abort();
    // Taken over and cut off by its client: one line all the same.
    await expectLoggedId(stream, 200, { end: 'request aborted' });
    const mcp = await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    await mcp.text();
    await expectLoggedId(mcp, 200);
    const refused = await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: 'https://elsewhere.example' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    await refused.text();
    await expectLoggedId(refused, 403);
  });

  it('gives a replayed write its own id', async () => {
    const space = await h.createSpace();
    const write = () =>
      h.post(`/hub/space/${space.spaceId}/messages`, {
        key: space.ownerKey,
        body: { content: 'once' },
        headers: { 'Idempotency-Key': 'request-id-replay' },
      });
    const first = await write();
    const replay = await write();
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    const ids = [await expectLoggedId(first, 200), await expectLoggedId(replay, 200)];
    expect(ids[0]).not.toBe(ids[1]);
  });

  it("echoes a client's well-formed id, and replaces any other", async () => {
    const echoed = await h.get('/api/health', { headers: { 'Request-Id': 'trace-7f3a:2.b_c' } });
    expect(echoed.headers.get('request-id')).toBe('trace-7f3a:2.b_c');
    const proxied = await h.get('/no/such/route', { headers: { 'X-Request-Id': 'lb-42' } });
    expect(proxied.status).toBe(404);
    expect(proxied.headers.get('request-id')).toBe('lb-42');
    await expect
      .poll(() => logOf(lines).some((l) => l.reqId === 'lb-42' && l.msg === 'request completed'))
      .toBe(true);
    for (const chosen of ['x'.repeat(129), 'two words', 'line\tbreak', 'ünïcode', '']) {
      const res = await h.get('/api/health', { headers: { 'Request-Id': chosen } });
      expect(res.headers.get('request-id')).toMatch(UUID);
    }
  });

  it('never echoes or logs an id shaped as a credential, nor a key pasted into the path', async () => {
    const { spaceId, ownerKey } = await h.createSpace();
    const invitation = await h.invite({ spaceId, ownerId: '', ownerKey });
    for (const chosen of [ownerKey, invitation, 'usr_abc', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln']) {
      const res = await h.get('/api/health', { headers: { 'Request-Id': chosen } });
      expect(res.headers.get('request-id')).toMatch(UUID);
    }
    const pasted = await h.get(`/hub/space/${ownerKey}`, { key: ownerKey });
    expect(pasted.status).toBe(404);
    await expect
      .poll(() =>
        logOf(lines).some(
          (l) => l.reqId === pasted.headers.get('request-id') && l.msg === 'request completed',
        ),
      )
      .toBe(true);
    const logged = lines.join('\n');
    expect(logged).not.toContain(ownerKey);
    expect(logged).not.toContain(invitation);
    expect(logged).toContain('/hub/space/[redacted]');
  });

  it('names a 429', async () => {
    await withServer({ config: { rateLimitMax: 1 } }, async ({ h: api }) => {
      await api.get('/openapi.json');
      const limited = await api.get('/openapi.json');
      expect(limited.status).toBe(429);
      expect(limited.headers.get('request-id')).toMatch(UUID);
    });
  });

  it('names the 503 of a request that arrives while the server closes, a JSON error coded shutting_down', async () => {
    const log: string[] = [];
    let closing = false;
    let finish: () => void = () => {};
    let held = false;
    let refusing = false;
    const server = await startTestServer({
      config: { logLevel: 'info' },
      logStream: { write: (line) => void log.push(line) },
      routes: (app) => {
        app.get('/test/held', () => {
          held = true;
          return new Promise((resolve) => (finish = () => resolve({ ok: true })));
        });
        app.addHook('preClose', async () => {
          closing = true;
        });
        app.addHook('onSend', async (_request, reply) => {
          if (reply.statusCode === 503) refusing = true;
        });
      },
    });
    // A request in flight keeps its connection open through the close; the next request on that
    // connection, sent once the close has begun, is answered 503 before anything runs (Fastify's
    // own 503, which it answered until 2026-11-26, had no code).
    const socket = connect(Number(new URL(server.listenUrl).port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    // The closing server ends the connection: a reset there is no unhandled 'error' (the worker's end).
    socket.on('error', () => {});
    socket.write('GET /test/held HTTP/1.1\r\nHost: x\r\n\r\n');
    await expect.poll(() => held).toBe(true);
    const closed = server.close();
    await expect.poll(() => closing).toBe(true);
    socket.write('GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n');
    // Its answer waits on the connection for the held one's, and so does its log line.
    await expect.poll(() => refusing).toBe(true);
    finish();
    await closed;
    await expect.poll(() => logOf(log).find((l) => l.res?.statusCode === 503)).toBeDefined();
    const refused = logOf(log).find((l) => l.res?.statusCode === 503);
    await expect.poll(() => received).toMatch(/HTTP\/1\.1 503/);
    socket.destroy();
    const answer = received.slice(received.indexOf('HTTP/1.1 503'));
    expect(answer).toMatch(new RegExp(`\r\nrequest-id: ${refused?.reqId}\r\n`, 'i'));
    expect(refused?.reqId).toMatch(UUID);
    expect(answer).toMatch(/\r\nretry-after: \d+\r\n/i);
    expect(answer).toContain('{"error":"the server is shutting down; retry shortly","code":"shutting_down"}');
  });

  it('logs the arrival of each request too at debug level', async () => {
    const log: string[] = [];
    await withServer(
      { config: { logLevel: 'debug' }, logStream: { write: (line) => void log.push(line) } },
      async ({ h: api }) => {
        const res = await api.get('/api/health?key=secret-in-the-url');
        const id = res.headers.get('request-id');
        const lines = () => logOf(log).filter((l) => l.reqId === id);
        await expect.poll(() => lines().map((l) => l.msg)).toEqual(['incoming request', 'request completed']);
        expect(lines()[0]!.req?.url).toBe('/api/health?key=[redacted]');
        expect(log.join('')).not.toContain('secret-in-the-url');
      },
    );
  });

  it("logs the cause of a 5xx on the request's own line: its reqId is the Request-Id the client got (a procedure, an MCP tool, a 503)", async () => {
    const log: string[] = [];
    await withServer(
      { config: { logLevel: 'info' }, logStream: { write: (line) => void log.push(line) } },
      async ({ srv: node, h: api }) => {
        const space = await api.createSpace();
        // The long poll's wait fails: the cause reaches the procedure's error path.
        let failure: Error = new Error('the watch broke');
        node.server.deps.watch = {
          watch: async () => {
            throw failure;
          },
        };
        const causeOf = async (res: { headers: Headers }, msg: string, level: number) => {
          const id = res.headers.get('request-id');
          expect(id).toMatch(UUID);
          await expect.poll(() => logOf(log).find((l) => l.msg === msg)).toBeDefined();
          expect(logOf(log).find((l) => l.msg === msg)).toMatchObject({
            reqId: id,
            level,
            err: { message: failure.message },
          });
        };
        const poll = `/hub/space/${space.spaceId}/messages?wait=5`;
        const rest = await api.get(poll, { key: space.ownerKey });
        expect(rest.status).toBe(500);
        await causeOf(rest, 'procedure failed', 50);

        const mcp = await fetch(`${node.listenUrl}/mcp`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: {
              name: 'list_messages',
              arguments: { spaceId: space.spaceId, privateKey: space.ownerKey, wait: 5 },
            },
          }),
        });
        expect(JSON.parse(await mcp.text()).result.isError).toBe(true);
        await causeOf(mcp, 'tool list_messages failed', 50);

        failure = new UnavailableError('the database is away');
        const unavailable = await api.get(poll, { key: space.ownerKey });
        expect(unavailable.status).toBe(503);
        await causeOf(unavailable, 'procedure unavailable', 40);
      },
    );
  });
});
