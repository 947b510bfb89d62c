import { randomBytes, randomUUID } from 'node:crypto';
import { FakeClock, rowsOf, SqlRateLimiter } from '@convene/core';
import { sql } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import { type ApiResponse, expectError, expectOk, onPostgres, useServer, withServer } from './helpers';
import { mintToken, signup } from './helpers/accounts';

const newKey = () => randomBytes(32).toString('hex');

/**
 * An anonymous read the rate limit counts, for the tests of the limit itself (the health probe is
 * never counted: see its own test).
 */
const PROBE = '/.well-known/deprecation-policy';

function expectRateLimitHeaders(
  res: ApiResponse,
  expected: { limit: number; window: number; remaining?: number; reset?: number },
) {
  const h = res.headers;
  expect(h.get('ratelimit-limit'), `${res.status} ${res.text}`).toBe(String(expected.limit));
  expect(h.get('ratelimit-policy')).toBe(`${expected.limit};w=${expected.window}`);
  const remaining = Number(h.get('ratelimit-remaining'));
  expect(Number.isInteger(remaining) && remaining >= 0 && remaining <= expected.limit).toBe(true);
  if (expected.remaining !== undefined) expect(remaining).toBe(expected.remaining);
  const reset = Number(h.get('ratelimit-reset'));
  expect(Number.isInteger(reset) && reset >= 1 && reset <= expected.window).toBe(true);
  if (expected.reset !== undefined) expect(reset).toBe(expected.reset);
}

describe('the default policy: 300 requests per 60 s', () => {
  const clock = new FakeClock();
  const { srv, h } = useServer({ clock, config: { rateLimitMax: 300, rateLimitWindowSeconds: 60 } });

  it('announces limit, remaining, reset and policy, counting down per client', async () => {
    const key = newKey();
    const first = await h.get(PROBE, { key });
    expectOk(first);
    expectRateLimitHeaders(first, { limit: 300, window: 60, remaining: 299, reset: 60 });
    expect(first.headers.get('ratelimit-policy')).toBe('300;w=60');
    clock.advance(15_000);
    const second = await h.get(PROBE, { key });
    expectRateLimitHeaders(second, { limit: 300, window: 60, remaining: 298, reset: 45 });
  });

  it('sets them on every answer: errors, 404s, other methods and raw routes', async () => {
    const key = newKey();
    const space = await h.createSpace();
    const answers = [
      await h.get(`/hub/space/${space.spaceId}`, { key }), // 401
      await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey }), // 200
      await h.post('/hub/space', { body: { name: '' } }), // 400
      await h.post('/hub/space', { body: '{"name":', raw: true }), // 400 unparsable
      await h.get('/no/such/route'), // 404
      await h.patch('/hub/space', { body: {} }), // 404
      await h.request('OPTIONS', '/hub/space'), // 404
      await h.request('HEAD', PROBE), // 200
      await h.get('/hub/space/%zz'), // 400 unroutable URL
      await h.get(PROBE, { headers: { 'API-Version': '7' } }), // 400
      await h.get('/.well-known/deprecation-policy'), // raw routes
      await h.get('/openapi.json'),
      await h.get('/.well-known/oauth-protected-resource'),
      await h.get(`/hub/space/${space.spaceId}/messages?timestamp=yesterday`, { key: space.ownerKey }), // 400
    ];
    expect(answers.map((r) => r.status)).toEqual([
      401, 200, 400, 400, 404, 404, 404, 200, 400, 400, 200, 200, 200, 400,
    ]);
    for (const res of answers) {
      expectRateLimitHeaders(res, { limit: 300, window: 60 });
      expect(res.headers.get('api-version')).toBe('1');
    }
  });

  it('sets them on the event stream, whose client is its `?key=`', async () => {
    const space = await h.createSpace();
    await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    const controller = new AbortController();
    const res = await fetch(`${srv.url}/hub/space/${space.spaceId}/messages/stream?key=${space.ownerKey}`, {
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    expect(res.headers.get('ratelimit-policy')).toBe('300;w=60');
    // createSpace was anonymous (the address); the key's own count: getSpace, then the stream.
    expect(res.headers.get('ratelimit-remaining')).toBe('298');
    controller.abort();
  });
});

describe('over the limit', () => {
  const clock = new FakeClock();
  const { srv, h } = useServer({ clock, config: { rateLimitMax: 3, rateLimitWindowSeconds: 20 } });
  const WINDOW_MS = 20_000;

  const countSpaces = async () =>
    Number(
      rowsOf<{ n: number | string }>(
        await srv.server.database.db.execute(sql`select count(*) as n from spaces`),
      )[0]?.n,
    );
  /** A live owner key, made from this address, whose window then ends: every test starts afresh. */
  const ownerKey = async () => {
    const space = await h.createSpace();
    clock.advance(WINDOW_MS);
    return space;
  };

  it('answers 429 with Retry-After and runs nothing', async () => {
    // createSpace reads no credential: the address is its client, whatever key comes with it.
    const client = { 'X-Private-Key': (await ownerKey()).ownerKey };
    const body = { name: 'Limited', description: 'counting' };
    for (let i = 0; i < 3; i++) expectOk(await h.post('/hub/space', { body, headers: client }));
    const before = await countSpaces();
    clock.advance(5_000);
    const refused = await h.post('/hub/space', { body, headers: client });
    expectError(refused, 429);
    expect(refused.body.error).toMatch(/rate limit/i);
    expect(refused.headers.get('retry-after')).toBe('15');
    expectRateLimitHeaders(refused, { limit: 3, window: 20, remaining: 0, reset: 15 });
    expect(await countSpaces()).toBe(before);
    // Every route is limited, raw ones too.
    expectError(await h.get('/.well-known/deprecation-policy', { headers: client }), 429);
    expectError(await h.get('/no/such/route', { headers: client }), 429);
    clock.advance(WINDOW_MS);
  });

  it('starts a new window when the old one ends', async () => {
    const { spaceId, ownerKey: key } = await ownerKey();
    const space = `/hub/space/${spaceId}`;
    for (let i = 0; i < 3; i++) expectOk(await h.get(space, { key }));
    expectError(await h.get(space, { key }), 429);
    clock.advance(19_999);
    const last = await h.get(space, { key });
    expectError(last, 429);
    expect(last.headers.get('retry-after')).toBe('1');
    clock.advance(1);
    const again = await h.get(space, { key });
    expectOk(again);
    expectRateLimitHeaders(again, { limit: 3, window: 20, remaining: 2, reset: 20 });
    clock.advance(WINDOW_MS);
  });

  it('counts each live credential apart from the others and from the address, on the routes that read it', async () => {
    const a = await ownerKey();
    const b = await ownerKey();
    const human = await signup(h);
    const token = await mintToken(h, human);
    clock.advance(WINDOW_MS);
    for (let i = 0; i < 3; i++) expectOk(await h.get(`/hub/space/${a.spaceId}`, { key: a.ownerKey }));
    expectError(await h.get(`/hub/space/${a.spaceId}/messages`, { key: a.ownerKey }), 429);
    // The same key in the query string is the same client.
    expectError(await h.get(`/hub/space/${a.spaceId}/messages/stream?key=${a.ownerKey}`), 429);
    expectOk(await h.get(`/hub/space/${b.spaceId}`, { key: b.ownerKey }));
    const user = await h.get(`/hub/space/${a.spaceId}/key`, { headers: { 'X-User-Token': token.token } });
    expectRateLimitHeaders(user, { limit: 3, window: 20, remaining: 2 });
    const session = await h.get('/hub/me', { headers: human.auth });
    expectOk(session);
    expectRateLimitHeaders(session, { limit: 3, window: 20, remaining: 2 });
    // None of that touched the address.
    const anonymous = await h.get(PROBE);
    expectRateLimitHeaders(anonymous, { limit: 3, window: 20, remaining: 2 });
    clock.advance(WINDOW_MS);
  });

  it('counts a route that reads no credential against the address, whatever it carries: minting keys buys no window', async () => {
    const space = await ownerKey();
    const human = await signup(h);
    const token = await mintToken(h, human);
    clock.advance(WINDOW_MS);
    const body = { name: 'Hop', description: 'a fresh key each time' };
    // The address's window used up by createSpace calls, each carrying the key the last one minted.
    let key = space.ownerKey;
    for (let i = 0; i < 3; i++) {
      const created = await h.post('/hub/space', { body, key });
      expectOk(created);
      key = created.body.ownerPrivateKey;
    }
    const before = await countSpaces();
    expectError(await h.post('/hub/space', { body, key }), 429);
    expectError(await h.post('/hub/space', { body, key: space.ownerKey }), 429);
    expect(await countSpaces()).toBe(before);
    // Every route that reads none, with any credential: passwords, the link flow, /ask, documents.
    const credentials = [{ 'X-Private-Key': key }, { 'X-User-Token': token.token }, human.auth];
    for (const headers of credentials) {
      expectError(
        await h.post('/hub/auth/login', { headers, body: { email: human.email, password: 'guess' } }),
        429,
      );
      expectError(
        await h.post('/hub/auth/signup', {
          headers,
          body: { email: 'x@example.com', password: 'long enough' },
        }),
        429,
      );
      expectError(await h.post('/hub/link/start', { headers, body: {} }), 429);
      expectError(await h.post('/ask', { headers, body: { query: 'lock' } }), 429);
      expectError(await h.get(PROBE, { headers }), 429);
      expectError(await h.get('/.well-known/oauth-protected-resource', { headers }), 429);
    }
    // A route that reads the credential still counts it apart.
    expectOk(await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
    expectOk(await h.get('/hub/me', { headers: human.auth }));
    clock.advance(WINDOW_MS);
  });

  it('counts an unknown, malformed or dead credential against the address', async () => {
    const space = await ownerKey();
    const { kicked, left } = await h.deadKeys(space);
    clock.advance(WINDOW_MS);
    const human = await signup(h);
    const token = await mintToken(h, human);
    expect((await h.delete(`/hub/me/tokens/${token.id}`, { headers: human.auth })).status).toBe(204);
    const closed = await h.createSpace();
    expectOk(await h.delete(`/hub/space/${closed.spaceId}`, { key: closed.ownerKey }));
    clock.advance(WINDOW_MS);
    const invented: Record<string, string>[] = [
      { 'X-Private-Key': newKey() },
      { 'X-Private-Key': 'not-a-key' },
      { 'X-Private-Key': `inv_${randomBytes(24).toString('base64url')}` },
      { 'X-Private-Key': kicked },
      { 'X-Private-Key': left },
      { 'X-Private-Key': closed.ownerKey },
      { 'X-User-Token': `usr_${randomBytes(32).toString('base64url')}` },
      { 'X-User-Token': token.token },
      { 'X-User-Token': space.ownerKey },
      { Authorization: `Bearer eyJhbGciOiJFZERTQSJ9.${newKey()}.sig` },
      { Authorization: 'Bearer x' },
    ];
    for (const [i, headers] of invented.entries()) {
      const res = await h.get(`${PROBE}?n=${i}`, { headers });
      if (i < 3) expectOk(res);
      else expectError(res, 429);
    }
    // On a keyed operation too: guessing keys is throttled with the address.
    expectError(await h.get(`/hub/space/${space.spaceId}`, { key: newKey() }), 429);
    expectError(await h.post('/hub/auth/login', { headers: { 'X-Private-Key': newKey() }, body: {} }), 429);
    expectError(await h.get(`/hub/space/${space.spaceId}/messages/stream?key=${newKey()}`), 429);
    // A live key still has its own window.
    expectOk(await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
    clock.advance(WINDOW_MS);
  });

  it('counts every call of an MCP JSON-RPC batch as a request', async () => {
    const space = await ownerKey();
    const call = (id: number) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'send_message', arguments: { spaceId: space.spaceId, content: `m${id}` } },
    });
    const mcp = (body: unknown) =>
      h.post('/mcp', {
        key: space.ownerKey,
        headers: { Accept: 'application/json, text/event-stream' },
        body,
      });
    const two = await mcp([call(1), call(2)]);
    expect(two.status, two.text).toBe(200);
    expectRateLimitHeaders(two, { limit: 3, window: 20, remaining: 1 });
    const refused = await mcp([call(3), call(4)]);
    expectError(refused, 429);
    const thirty = Array.from({ length: 30 }, (_, i) => call(10 + i));
    clock.advance(WINDOW_MS);
    expectError(await mcp(thirty), 429);
    clock.advance(WINDOW_MS);
    const listed = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    // The calls of a batch run side by side: both sent, in either order.
    expect(listed.body.messages.map((m: { content: string }) => m.content).sort()).toEqual(['m1', 'm2']);
    clock.advance(WINDOW_MS);
  });
});

describe('the health probe', () => {
  const clock = new FakeClock();
  const { h } = useServer({ clock, config: { rateLimitMax: 3, rateLimitWindowSeconds: 20 } });

  it('is never counted, from any address: a balancer probing every node is never refused, and takes nothing from the API window', async () => {
    for (let i = 0; i < 10; i++) {
      const probe = await h.request(i % 2 ? 'HEAD' : 'GET', '/api/health');
      expect(probe.status).toBe(200);
      // Every API response carries the headers: the probe's say the address's window, untouched.
      expectRateLimitHeaders(probe, { limit: 3, window: 20, remaining: 3, reset: 20 });
    }
    // The address's window is whole: its API requests have all three.
    expectRateLimitHeaders(await h.get(PROBE), { limit: 3, window: 20, remaining: 2 });
    clock.advance(5_000);
    await h.get(PROBE);
    await h.get(PROBE);
    expectError(await h.get(PROBE), 429);
    // Its API window spent, the address's probes still answer, and say so (a reading of the
    // window is reused for a second).
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const spent = await h.get('/api/health');
    expectOk(spent);
    expectRateLimitHeaders(spent, { limit: 3, window: 20, remaining: 0, reset: 15 });
    // Another method on the path is an ordinary request: counted, and refused over the limit.
    expectError(await h.delete('/api/health'), 429);
    clock.advance(20_000);
  });
});

describe('pages, their assets and avatars, by default', () => {
  const clock = new FakeClock();
  const { h } = useServer({ clock, config: { rateLimitMax: 3, rateLimitWindowSeconds: 20 } });

  it('count in the one window of their address, as the specification says (300 per client, all endpoints)', async () => {
    const page = await h.get(`/avatar/${randomUUID()}.svg`);
    expectRateLimitHeaders(page, { limit: 3, window: 20, remaining: 2 });
    expectRateLimitHeaders(await h.get('/web/style.css'), { limit: 3, window: 20, remaining: 1 });
    expectRateLimitHeaders(await h.get(PROBE), { limit: 3, window: 20, remaining: 0 });
    expectError(await h.get(`/avatar/${randomUUID()}.svg`), 429);
    clock.advance(20_000);
  });
});

describe('pages, their assets and avatars, with RATE_LIMIT_PAGES_MAX: a budget of their own per address', () => {
  const clock = new FakeClock();
  const { h } = useServer({
    clock,
    config: { rateLimitMax: 3, pageRateLimitMax: 12, rateLimitWindowSeconds: 20 },
  });
  const WINDOW_MS = 20_000;
  const space = `/space/${randomUUID()}`;
  /** What one person's view of a space page asks for: the page, its files and two avatars. */
  const pageView = async (): Promise<ApiResponse[]> => {
    const page = await h.get(space);
    const files = [...page.text.matchAll(/"(\/web\/[^"]+)"/g)].map(([, path]) => path!);
    const rest = [...new Set(files), `/avatar/${randomUUID()}.svg`, `/avatar/${randomUUID()}.svg`];
    return [page, ...(await Promise.all(rest.map((path) => h.get(path))))];
  };

  it('lets a burst of page views through without touching the API window of the same address', async () => {
    // Two views of six requests each (the page, its script, stylesheet and icon, two avatars) use
    // the budget of 12 up; a third is over it.
    const views = [...(await pageView()), ...(await pageView())];
    expect(views.map((r) => r.status)).toEqual(Array(12).fill(200));
    for (const res of views) expectRateLimitHeaders(res, { limit: 12, window: 20 });
    expect(views.map((r) => r.headers.get('ratelimit-remaining')).sort()).toEqual(
      Array.from({ length: 12 }, (_, i) => String(i)).sort(),
    );
    // The API's window of this address is untouched: an anonymous call has all 3 of its own.
    const api = await h.get(PROBE);
    expectOk(api);
    expectRateLimitHeaders(api, { limit: 3, window: 20, remaining: 2 });
    // Past the pages' budget: 429 with Retry-After, for the pages only.
    const over = await pageView();
    for (const res of over) {
      expectError(res, 429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expectOk(await h.get(PROBE));
    clock.advance(WINDOW_MS);
  });

  it('keeps serving pages to an address whose API window is used up', async () => {
    for (let i = 0; i < 3; i++) expectOk(await h.get(PROBE));
    expectError(await h.get(PROBE), 429);
    const view = await pageView();
    expect(view.map((r) => r.status)).toEqual(Array(6).fill(200));
    clock.advance(WINDOW_MS);
  });

  it('counts what is not a page in the API window: unknown routes, the API under /web-like names', async () => {
    for (const path of ['/web', '/avatars/x.svg', '/no/such/route'])
      expectRateLimitHeaders(await h.get(path), { limit: 3, window: 20 });
    clock.advance(WINDOW_MS);
  });
});

describe('MCP calls carrying their key as the privateKey argument', () => {
  const clock = new FakeClock();
  const { h } = useServer({ clock, config: { rateLimitMax: 3, rateLimitWindowSeconds: 20 } });
  const WINDOW_MS = 20_000;
  const call = (id: number, spaceId: string, privateKey?: string) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'get_space', arguments: { spaceId, ...(privateKey ? { privateKey } : {}) } },
  });
  const mcp = (body: unknown) =>
    h.post('/mcp', { headers: { Accept: 'application/json, text/event-stream' }, body });

  it('count against that key, as the X-Private-Key header would: agents on one address do not share a window', async () => {
    const a = await h.createSpace();
    const b = await h.createSpace();
    clock.advance(WINDOW_MS);
    // Two agents from one address, each with its own key in the arguments.
    for (let i = 0; i < 3; i++) {
      for (const space of [a, b]) {
        const res = await mcp(call(i, space.spaceId, space.ownerKey));
        expect(res.status, res.text).toBe(200);
        expect(res.body.result.isError, res.text).toBeFalsy();
        expectRateLimitHeaders(res, { limit: 3, window: 20, remaining: 2 - i });
      }
    }
    const refused = await mcp(call(9, a.spaceId, a.ownerKey));
    expectError(refused, 429);
    expect(refused.headers.get('retry-after')).toBeTruthy();
    // The address has its own window still: anonymous calls and other keys pass.
    expectOk(await h.get(PROBE));
    // A batch counts each call against the key it carries; over any of them the batch is 429.
    const c = await h.createSpace();
    const d = await h.createSpace();
    clock.advance(WINDOW_MS);
    const batch = await mcp([
      call(1, c.spaceId, c.ownerKey),
      call(2, c.spaceId, c.ownerKey),
      call(3, d.spaceId, d.ownerKey),
    ]);
    expect(batch.status, batch.text).toBe(200);
    expectRateLimitHeaders(batch, { limit: 3, window: 20, remaining: 1 });
    expectError(await mcp([call(4, c.spaceId, c.ownerKey), call(5, c.spaceId, c.ownerKey)]), 429);
    clock.advance(WINDOW_MS);
  });

  it('count a batch the route refuses as a whole (over 100 calls) once, without looking up the keys of its calls', async () => {
    clock.advance(WINDOW_MS);
    const space = await h.createSpace();
    clock.advance(WINDOW_MS);
    // Thousands of calls, each with a key of its own that is no one's: each would count against
    // the address (and be looked up first), so the batch would answer 429 after seconds of lookups.
    const huge = Array.from({ length: 2_000 }, (_, i) =>
      call(i, space.spaceId, randomBytes(32).toString('hex')),
    );
    const refused = await mcp(huge);
    expectError(refused, 400);
    expect(refused.body.error).toMatch(/at most 100 calls/);
    // It counted once: the address has one request of its three left after the next.
    const next = await h.get(PROBE);
    expectOk(next);
    expectRateLimitHeaders(next, { limit: 3, window: 20, remaining: 1 });
    // So with a key in the header: its 1,999 further calls are not counted either.
    const headed = await h.post('/mcp', {
      key: space.ownerKey,
      headers: { Accept: 'application/json, text/event-stream' },
      body: Array.from({ length: 2_000 }, (_, i) => call(i, space.spaceId)),
    });
    expectError(headed, 400);
    expectRateLimitHeaders(headed, { limit: 3, window: 20, remaining: 2 });
    clock.advance(WINDOW_MS);
  });

  it('count a tool that reads no credential (create_space) against the address, whatever key the connection carries', async () => {
    clock.advance(WINDOW_MS);
    const space = await h.createSpace();
    clock.advance(WINDOW_MS);
    const create = (id: number) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'create_space', arguments: { name: `Hop ${id}`, description: 'minted' } },
    });
    const headed = (body: unknown) =>
      h.post('/mcp', {
        key: space.ownerKey,
        headers: { Accept: 'application/json, text/event-stream' },
        body,
      });
    for (let i = 0; i < 3; i++) {
      const res = await headed(create(i));
      expect(res.status, res.text).toBe(200);
      expect(res.body.result.isError, res.text).toBeFalsy();
    }
    expectError(await headed(create(3)), 429);
    expectError(await h.get(PROBE), 429);
    // The key's own window is untouched: a tool that reads it still passes.
    const read = await headed(call(4, space.spaceId));
    expect(read.status, read.text).toBe(200);
    expectRateLimitHeaders(read, { limit: 3, window: 20, remaining: 2 });
    clock.advance(WINDOW_MS);
  });

  it('count an unknown or malformed key, or none, against the address, and a body that does not parse too', async () => {
    const space = await h.createSpace();
    clock.advance(WINDOW_MS);
    expect((await mcp(call(1, space.spaceId, 'f'.repeat(64)))).status).toBe(200);
    expect((await mcp(call(2, space.spaceId, 'nope'))).status).toBe(200);
    expectError(
      await h.post('/mcp', {
        headers: { Accept: 'application/json, text/event-stream' },
        body: '{',
        raw: true,
      }),
      400,
    );
    expectError(await mcp(call(3, space.spaceId)), 429);
    // The live key is still a client of its own.
    expect((await mcp(call(4, space.spaceId, space.ownerKey))).status).toBe(200);
    clock.advance(WINDOW_MS);
  });
});

describe('sendMessage, counted in its own statement where the counters are in PostgreSQL', () => {
  const clock = new FakeClock();
  const { h } = useServer({ clock, config: { rateLimitMax: 4, rateLimitWindowSeconds: 20 } });
  const WINDOW_MS = 20_000;
  const messagesOf = async (space: { spaceId: string; ownerKey: string }) =>
    (await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey })).body.messages as {
      content: string;
    }[];
  const send = (space: { spaceId: string }, key: string, content: unknown, headers = {}) =>
    h.post(`/hub/space/${space.spaceId}/messages`, { key, body: { content }, headers });
  /** A space whose creator's address window then ends: every test starts afresh. */
  const freshSpace = async () => {
    const space = await h.createSpace();
    clock.advance(WINDOW_MS);
    return space;
  };

  it('counts each send once, in the window it shares with every other request of the key', async () => {
    const space = await freshSpace();
    const consume = vi.spyOn(SqlRateLimiter.prototype, 'consume');
    try {
      const remaining: (string | null)[] = [];
      for (const content of ['one', 'two', 'three']) {
        const res = await send(space, space.ownerKey, content);
        expectOk(res);
        expectRateLimitHeaders(res, { limit: 4, window: 20 });
        remaining.push(res.headers.get('ratelimit-remaining'));
      }
      expect(remaining).toEqual(['3', '2', '1']);
      // On PostgreSQL no send made a round trip of its own to the counters.
      if (onPostgres()) expect(consume).not.toHaveBeenCalled();
    } finally {
      consume.mockRestore();
    }
    expectOk(await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
    clock.advance(5_000);
    const refused = await send(space, space.ownerKey, 'four');
    expectError(refused, 429);
    expect(refused.body.error).toMatch(/rate limit/i);
    expect(refused.headers.get('retry-after')).toBe('15');
    expectRateLimitHeaders(refused, { limit: 4, window: 20, remaining: 0, reset: 15 });
    expectError(await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey }), 429);
    clock.advance(WINDOW_MS);
    expect((await messagesOf(space)).map((m) => m.content)).toEqual(['one', 'two', 'three']);
  });

  it('lets exactly the limit of concurrent sends through and writes nothing for the others', async () => {
    const space = await freshSpace();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => send(space, space.ownerKey, `m${i}`)),
    );
    const sent = answers.filter((r) => r.status === 200);
    expect(sent).toHaveLength(4);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(6);
    expect(sent.map((r) => r.headers.get('ratelimit-remaining')).sort()).toEqual(['0', '1', '2', '3']);
    for (const res of answers) expectRateLimitHeaders(res, { limit: 4, window: 20 });
    clock.advance(WINDOW_MS);
    expect(await messagesOf(space)).toHaveLength(4);
    clock.advance(WINDOW_MS);
  });

  it('counts sends that fail, before or after the statement, and answers 429 over the limit', async () => {
    const space = await freshSpace();
    const muted = await h.joinActive(space, { name: 'Muted' });
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${muted.participantId}/mute`, {
        key: space.ownerKey,
      }),
    );
    clock.advance(WINDOW_MS);
    // A bad body (never reaches the statement) and a muted sender (refused after it) each count.
    const bad = await send(space, space.ownerKey, '');
    expectError(bad, 400);
    expectRateLimitHeaders(bad, { limit: 4, window: 20, remaining: 3 });
    const unparsable = await h.post(`/hub/space/${space.spaceId}/messages`, {
      key: space.ownerKey,
      body: '{"content":',
      raw: true,
    });
    expectError(unparsable, 400);
    expectRateLimitHeaders(unparsable, { limit: 4, window: 20, remaining: 2 });
    const mutedAnswer = await send(space, muted.key, 'hello?');
    expectError(mutedAnswer, 403);
    expectRateLimitHeaders(mutedAnswer, { limit: 4, window: 20, remaining: 3 });
    // A replay counts too, and over the limit becomes the 429 it would have been.
    const guarded = { 'Idempotency-Key': `k-${randomBytes(8).toString('hex')}` };
    const first = await send(space, space.ownerKey, 'once', guarded);
    expectOk(first);
    expectRateLimitHeaders(first, { limit: 4, window: 20, remaining: 1 });
    const replay = await send(space, space.ownerKey, 'once', guarded);
    expectOk(replay);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expectRateLimitHeaders(replay, { limit: 4, window: 20, remaining: 0 });
    const overReplay = await send(space, space.ownerKey, 'once', guarded);
    expectError(overReplay, 429);
    expect(overReplay.headers.get('idempotency-replayed')).toBeNull();
    expect(overReplay.headers.get('retry-after')).toBe('20');
    // Over the limit, a bad body is refused for the limit first, as on every route.
    expectError(await send(space, space.ownerKey, ''), 429);
    clock.advance(WINDOW_MS);
    expect((await messagesOf(space)).map((m) => m.content)).toEqual(['once']);
    clock.advance(WINDOW_MS);
  });

  it('counts a send with an unknown key against the address', async () => {
    const space = await freshSpace();
    const invented = await send(space, newKey(), 'guess');
    expectError(invented, 401);
    expectRateLimitHeaders(invented, { limit: 4, window: 20, remaining: 3 });
    expectRateLimitHeaders(await h.get(PROBE), { limit: 4, window: 20, remaining: 2 });
    // The owner's key is a client of its own, untouched.
    expectRateLimitHeaders(await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey }), {
      limit: 4,
      window: 20,
      remaining: 3,
    });
    clock.advance(WINDOW_MS);
  });
});

describe('the address, when no credential is presented', () => {
  /** A request as a proxy forwards it, with this X-Forwarded-For. */
  const from = (chain: string) => ({ headers: { 'X-Forwarded-For': chain } });

  it('is the socket address unless TRUST_PROXY', async () => {
    const clock = new FakeClock();
    await withServer({ clock, config: { rateLimitMax: 2, rateLimitWindowSeconds: 60 } }, async ({ h }) => {
      const space = await h.createSpace();
      clock.advance(60_000);
      expectOk(await h.get(PROBE, from('10.0.0.1')));
      expectOk(await h.get(PROBE, from('10.0.0.2')));
      // X-Forwarded-For is ignored: both came from 127.0.0.1.
      expectError(await h.get(PROBE, from('10.0.0.3')), 429);
      // A live credential is a client of its own, not the address, where the route reads it.
      expectOk(await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
      expectError(await h.get(PROBE, { key: space.ownerKey }), 429);
    });
  });

  it('is the forwarded address behind a trusted proxy', async () => {
    await withServer(
      {
        config: { rateLimitMax: 2, rateLimitWindowSeconds: 60, trustProxy: 1 },
      },
      async ({ h }) => {
        expectOk(await h.get(PROBE, from('10.0.0.1')));
        expectOk(await h.get(PROBE, from('10.0.0.1')));
        expectError(await h.get(PROBE, from('10.0.0.1')), 429);
        const other = await h.get(PROBE, from('10.0.0.2'));
        expectOk(other);
        expect(other.headers.get('ratelimit-remaining')).toBe('1');
      },
    );
  });

  it('is an IPv6 address by its /64, as one subscriber gets one: its other addresses buy no fresh bucket', async () => {
    await withServer(
      { config: { rateLimitMax: 2, rateLimitWindowSeconds: 60, trustProxy: 1 } },
      async ({ h }) => {
        expectOk(await h.get(PROBE, from('2001:db8:a:b::1')));
        expectOk(await h.get(PROBE, from('2001:db8:a:b:ffff:1234:5678:9abc')));
        expectError(await h.get(PROBE, from('2001:0db8:000a:000b::2')), 429);
        // The next /64 is another subscriber.
        expectOk(await h.get(PROBE, from('2001:db8:a:c::1')));
        // An IPv4 address is itself, however it is written.
        expectOk(await h.get(PROBE, from('192.0.2.1')));
        expectOk(await h.get(PROBE, from('::ffff:192.0.2.1')));
        expectError(await h.get(PROBE, from('192.0.2.1')), 429);
        expectOk(await h.get(PROBE, from('192.0.2.2')));
      },
    );
  });

  it('is the entry the trusted proxies saw, whatever the client put left of it', async () => {
    // A proxy that appends (nginx's $proxy_add_x_forwarded_for) keeps what the client sent.
    await withServer(
      { config: { rateLimitMax: 2, rateLimitWindowSeconds: 60, trustProxy: 1 } },
      async ({ h }) => {
        expectOk(await h.get(PROBE, from('1.1.1.1, 10.0.0.1')));
        expectOk(await h.get(PROBE, from('2.2.2.2, 10.0.0.1')));
        // Inventing a new leftmost entry buys no fresh bucket.
        expectError(await h.get(PROBE, from('3.3.3.3, 10.0.0.1')), 429);
      },
    );
    // Two proxies (a load balancer, then the node's own): the entry the farther one saw.
    await withServer(
      { config: { rateLimitMax: 2, rateLimitWindowSeconds: 60, trustProxy: 2 } },
      async ({ h }) => {
        expectOk(await h.get(PROBE, from('1.1.1.1, 10.0.0.7, 172.16.0.1')));
        expectOk(await h.get(PROBE, from('2.2.2.2, 10.0.0.7, 172.16.0.2')));
        expectError(await h.get(PROBE, from('10.0.0.7, 172.16.0.3')), 429);
        expectOk(await h.get(PROBE, from('10.0.0.8, 172.16.0.1')));
      },
    );
  });
});

describe.runIf(onPostgres())('counters in PostgreSQL', () => {
  const clock = new FakeClock();
  const { srv, h } = useServer({
    clock,
    config: { rateLimitMax: 10, rateLimitWindowSeconds: 30, policySweepIntervalMs: 50 },
  });

  const keys = async () =>
    rowsOf<{ key: string }>(await srv.server.database.db.execute(sql`select key from rate_limits`)).map(
      (r) => r.key,
    );

  it('keep a hash of the client, never the credential', async () => {
    const key = newKey();
    expectOk(await h.get(PROBE, { key }));
    const stored = await keys();
    expect(stored.length).toBeGreaterThan(0);
    for (const k of stored) {
      expect(k).toMatch(/^[0-9a-f]{64}$/);
      expect(k).not.toContain(key);
    }
  });

  it('are deleted once their window has ended', async () => {
    expectOk(await h.get(PROBE, { key: newKey() }));
    expect((await keys()).length).toBeGreaterThan(0);
    clock.advance(30_001);
    const deadline = Date.now() + 5_000;
    while ((await keys()).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect(await keys()).toEqual([]);
  });
});
