import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { originForm } from '../src/http/policy';
import { redactUrl } from '../src/http/redact';
import { formatLogLine } from '../src/http/request-log';
import { type ApiResponse, expectError, useServer, withServer } from './helpers';
import { mintToken, signup } from './helpers/accounts';
import { freePort, onPostgres } from './helpers/harness';
import { spawnServer } from './helpers/process';

/** Bad input of every kind is a JSON 400 that changes nothing, never a 500 or a reset. */

const { h } = useServer();

function expectBadRequest(res: ApiResponse, message?: RegExp) {
  expectError(res, 400);
  expect(Object.keys(res.body)).toContain('error');
  if (message) expect(res.body.error).toMatch(message);
}

/** `{"a":{"a":…1…}}` nested `depth` levels. */
const nestedObject = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
const nestedArray = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('U+0000', () => {
  it('in any body text field is 400 and changes nothing', async () => {
    const space = await h.createSpace();
    const participant = await h.joinActive(space);
    const artifact = await h.post(`/hub/space/${space.spaceId}/artifact`, {
      key: space.ownerKey,
      body: { name: 'doc', type: 'markdown', content: 'v1' },
    });
    const human = await signup(h);
    const cases: [string, string, Record<string, unknown>, Record<string, string>?][] = [
      ['POST', '/hub/space', { name: 'a\u0000', description: 'd' }],
      ['POST', '/hub/space', { name: 'a', description: 'd', ownerRole: 'x\u0000y' }],
      ['PUT', `/hub/space/${space.spaceId}`, { agenda: '\u0000' }],
      ['POST', `/hub/space/${space.spaceId}/messages`, { content: 'hi\u0000' }],
      ['POST', `/hub/space/${space.spaceId}/artifact`, { name: 'n', type: 'markdown', content: '\u0000' }],
      ['PATCH', `/hub/space/${space.spaceId}/artifact/${artifact.body.id}`, { content: 'x\u0000' }],
      ['POST', '/hub/link/start', { agentName: 'agent\u0000' }],
      ['POST', '/hub/link/poll', { deviceCode: '\u0000' }],
      ['POST', '/hub/auth/signup', { email: 'nul@example.com', password: 'password\u0000x' }],
      ['POST', '/hub/auth/login', { email: 'nul\u0000@example.com', password: 'password' }],
      ['POST', '/hub/me/tokens', { name: 'tok\u0000' }, human.auth],
      ['POST', '/hub/me/link/approve', { userCode: 'BCDF\u0000' }, human.auth],
      ['POST', '/ask', { query: 'meeting\u0000space' }],
      // A member name holding it, where no field is expected.
      ['PUT', `/hub/space/${space.spaceId}`, { 'a\u0000': 'x' }],
    ];
    for (const [method, path, body, headers] of cases) {
      const res = await h.request(method, path, {
        key: path.includes(space.spaceId) ? space.ownerKey : undefined,
        body,
        ...(headers ? { headers } : {}),
      });
      expectBadRequest(res, /U\+0000/);
    }
    const sent = await h.post(`/hub/space/${space.spaceId}/messages`, {
      key: participant.key,
      body: { content: 'x\u0000' },
    });
    expectBadRequest(sent);
    const messages = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    expect(messages.body.messages).toEqual([]);
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect(view.body.agenda).toBe('');
  });

  it('in a query value or path segment is 400', async () => {
    const space = await h.createSpace();
    const human = await signup(h);
    expectBadRequest(await h.get('/ask?query=a%00b'), /U\+0000/);
    expectBadRequest(
      await h.get(`/hub/space/${space.spaceId}/messages?timestamp=2030%00`, { key: space.ownerKey }),
    );
    expectBadRequest(await h.get('/hub/me/link/BCDF%00GHJK', { headers: human.auth }));
  });
});

describe('text that is not UTF-8 or not Unicode', () => {
  it('is 400 and changes nothing: bytes that are no UTF-8, another charset, a lone surrogate', async () => {
    const space = await h.createSpace();
    const path = `/hub/space/${space.spaceId}/messages`;
    const bytes = (...parts: (string | number[])[]) =>
      Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))));
    const cases: [Uint8Array | string, string, RegExp][] = [
      // Invalid bytes, an overlong encoding, an encoded surrogate (CESU-8).
      [bytes('{"content":"a', [0xff, 0xfe], 'b"}'), 'application/json', /not valid UTF-8/],
      [bytes('{"content":"', [0xc0, 0xaf], '"}'), 'application/json', /not valid UTF-8/],
      [bytes('{"content":"', [0xed, 0xa0, 0x80], '"}'), 'application/json', /not valid UTF-8/],
      // Text in another charset, declared.
      [bytes('{"content":"caf', [0xe9], '"}'), 'application/json; charset=iso-8859-1', /UTF-8/],
      ['{"content":"plain"}', 'application/json; charset=utf-7', /UTF-8/],
      // Valid JSON escapes that name no character: a lone surrogate, in a value and in a name.
      ['{"content":"a\\ud800b"}', 'application/json', /lone surrogate/],
      ['{"content":"x","\\udc00":1}', 'application/json', /lone surrogate/],
    ];
    for (const [body, type, message] of cases) {
      const res = await h.post(path, {
        key: space.ownerKey,
        body,
        raw: true,
        headers: { 'Content-Type': type },
      });
      expectBadRequest(res, message);
    }
    expectBadRequest(
      await h.put(`/hub/space/${space.spaceId}`, {
        key: space.ownerKey,
        body: '{"name":"\\ud800"}',
        raw: true,
      }),
      /lone surrogate/,
    );
    const messages = await h.get(path, { key: space.ownerKey });
    expect(messages.body.messages).toEqual([]);
    expect((await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey })).body.name).not.toContain(
      '\ufffd',
    );
    // UTF-8 declared in any spelling, and a pair of surrogates (one character), are text.
    for (const type of ['application/json; charset=UTF-8', 'application/json;charset="utf8"'])
      expect(
        (
          await h.post(path, {
            key: space.ownerKey,
            body: '{"content":"caf\u00e9 \\ud83d\\ude00"}',
            raw: true,
            headers: { 'Content-Type': type },
          })
        ).status,
      ).toBe(200);
    expect(
      ((await h.get(path, { key: space.ownerKey })).body.messages as { content: string }[]).map(
        (m) => m.content,
      ),
    ).toEqual(['café 😀', 'café 😀']);
  });
});

describe('nesting', () => {
  it('deeper than 64 levels is 400 on every operation that takes a body', async () => {
    const space = await h.createSpace();
    const human = await signup(h);
    const invitationKey = await h.invite(space);
    const targets: [string, string, Record<string, string>][] = [
      ['POST', '/hub/space', {}],
      ['PUT', `/hub/space/${space.spaceId}`, { 'X-Private-Key': space.ownerKey }],
      ['POST', `/hub/space/${space.spaceId}/messages`, { 'X-Private-Key': space.ownerKey }],
      ['POST', `/hub/space/${space.spaceId}/artifact`, { 'X-Private-Key': space.ownerKey }],
      ['POST', `/hub/space/${space.spaceId}/join`, { 'X-Private-Key': invitationKey }],
      ['POST', '/hub/link/start', {}],
      ['POST', '/hub/link/poll', {}],
      ['POST', '/hub/auth/signup', {}],
      ['POST', '/hub/auth/login', {}],
      ['POST', '/hub/me/tokens', human.auth],
      ['POST', '/ask', {}],
      ['POST', '/mcp', { Accept: 'application/json, text/event-stream' }],
    ];
    for (const [method, path, headers] of targets) {
      for (const body of [`{"name":${nestedObject(5000)}}`, nestedArray(100_000), nestedObject(65)]) {
        const res = await h.request(method, path, { body, raw: true, headers });
        expectBadRequest(res, /nested deeper than 64/);
      }
    }
  });

  it('of 64 levels parses (and is refused by the contract, not by the parser)', async () => {
    const res = await h.post('/hub/space', { body: `{"name":${nestedObject(63)}}`, raw: true });
    expectBadRequest(res);
    expect(res.body.error).not.toMatch(/nested/);
  });
});

describe('bodies that are not objects', () => {
  it('are 400 where an object is expected, and change nothing', async () => {
    const space = await h.createSpace({ name: 'Before' });
    const human = await signup(h);
    for (const body of ['[]', '42', '"text"', 'null', 'true', '[{"name":"After"}]']) {
      expectBadRequest(
        await h.put(`/hub/space/${space.spaceId}`, { key: space.ownerKey, body, raw: true }),
        /JSON object/,
      );
      expectBadRequest(await h.post('/hub/link/start', { body, raw: true }), /JSON object/);
      expectBadRequest(
        await h.post('/hub/me/tokens', { headers: human.auth, body, raw: true }),
        /JSON object/,
      );
      expectBadRequest(await h.post('/hub/space', { body, raw: true }), /JSON object/);
    }
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect(view.body.name).toBe('Before');
    const tokens = await h.get('/hub/me/tokens', { headers: human.auth });
    expect(tokens.body).toEqual([]);
  });

  it('a JSON-RPC batch is still an array on /mcp, answered with an array however many requests it holds', async () => {
    const post = (body: unknown) =>
      h.post('/mcp', { headers: { Accept: 'application/json, text/event-stream' }, body });
    const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });
    const one = await post([ping(1)]);
    expect(one.status).toBe(200);
    // JSON-RPC 2.0: a batch's answer is an array, one request's too (the SDK answered an object).
    expect(one.body).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
    const beside = await post([ping(2), { jsonrpc: '2.0', method: 'notifications/initialized' }]);
    expect(beside.body).toEqual([{ jsonrpc: '2.0', id: 2, result: {} }]);
    const two = await post([ping(3), ping(4)]);
    expect(two.body).toEqual([
      { jsonrpc: '2.0', id: 3, result: {} },
      { jsonrpc: '2.0', id: 4, result: {} },
    ]);
    // A call alone is answered alone.
    expect((await post(ping(5))).body).toEqual({ jsonrpc: '2.0', id: 5, result: {} });
    // initialize in a batch of one: an array, and the session it starts.
    const initialize = await post([
      {
        jsonrpc: '2.0',
        id: 6,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      },
    ]);
    expect(initialize.body).toEqual([
      { jsonrpc: '2.0', id: 6, result: expect.objectContaining({ protocolVersion: '2025-06-18' }) },
    ]);
    expect(initialize.headers.get('mcp-session-id')).toMatch(/^[\w-]{32}$/);
  });

  it('an empty JSON-RPC batch is 400 on /mcp (JSON-RPC 2.0: an invalid request), not an empty 202', async () => {
    const res = await h.post('/mcp', {
      headers: { Accept: 'application/json, text/event-stream' },
      body: '[]',
      raw: true,
    });
    expectBadRequest(res, /at least one call/);
  });
});

// Its own process: a client in the server's process never races the server's socket writes.
describe.runIf(!onPostgres())('bodies over 2 MiB', () => {
  it('always get the JSON 400, never a reset connection', async () => {
    const child = spawnServer({ DATABASE_URL: 'memory://', PORT: String(await freePort()) });
    try {
      const url = await child.ready;
      const outcomes: string[] = [];
      for (let i = 0; i < 10; i++) {
        const body = JSON.stringify({ name: 'n', description: 'x'.repeat((3 + (i % 6)) * 1024 * 1024 + i) });
        try {
          const res = await fetch(`${url}/hub/space`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body,
          });
          const text = await res.text();
          outcomes.push(`${res.status} ${JSON.parse(text).error}`);
        } catch (error) {
          outcomes.push(`failed: ${(error as { cause?: { code?: string } }).cause?.code ?? String(error)}`);
        }
      }
      expect(outcomes).toEqual(outcomes.map(() => '400 request body too large (limit 2 MiB)'));
    } finally {
      await child.stop();
    }
  }, 180_000);
});

describe('request logs', () => {
  /** A server's options that keep its log lines, at info. */
  const loggedAtInfo = () => {
    const lines: string[] = [];
    const options = {
      config: { logLevel: 'info' as const },
      logStream: { write: (line: string) => void lines.push(line) },
    };
    return { lines, options };
  };

  it('redact a key whose parameter name is percent-encoded', async () => {
    const { lines, options } = loggedAtInfo();
    await withServer(options, async ({ h: api }) => {
      const space = await api.createSpace();
      const human = await signup(api);
      const token = await mintToken(api, human);
      await api.get(`/hub/space/${space.spaceId}?%6Bey=${space.ownerKey}`);
      await api.get(`/hub/space/${space.spaceId}/messages/stream?k%65y=${space.ownerKey}&timestamp=x`);
      await api.get(`/hub/space/${space.spaceId}/agent.md?KEY=${space.ownerKey}`);
      await api.get(`/hub/me?%74oken=${token.token}`);
      const log = lines.join('\n');
      expect(log).toContain('[redacted]');
      expect(log).not.toContain(space.ownerKey);
      expect(log).not.toContain(token.token);
    });
  });

  it('redact the value of every query parameter but the positions, bounds and waits', async () => {
    const { lines, options } = loggedAtInfo();
    await withServer(options, async ({ h: api }) => {
      const space = await api.createSpace();
      const key = space.ownerKey;
      // Names a client may invent for a key, a bare key, and a key inside a path in `next`.
      await api.get(`/hub/space/${space.spaceId}?privateKey=${key}&access_token=${key}&api_key=${key}`);
      await api.get(`/hub/space/${space.spaceId}/messages?${key}&limit=5&after=3&wait=0`);
      await api.get(`/login?next=${encodeURIComponent(`/join/${space.spaceId}?key=${key}`)}`);
      const log = lines.join('\n');
      expect(log).not.toContain(key);
      expect(log).toContain('privateKey=[redacted]&access_token=[redacted]&api_key=[redacted]');
      expect(log).toContain('/messages?[redacted]&limit=5&after=3&wait=0');
      expect(log).toContain('/login?next=[redacted]');
    });
  });

  it('redact the user name and password of a request target in absolute form, in the JSON line and the text one', async () => {
    const { lines, options } = loggedAtInfo();
    await withServer(options, async ({ srv }) => {
      const { hostname, port } = new URL(srv.listenUrl);
      // What an operator's trial sent: Node and Fastify take the absolute form, and route it by its path.
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), hostname, () =>
          socket.write(
            'GET http://user:pa55word@convene.example/api/health?key=k3y&after=3 HTTP/1.1\r\n' +
              'Host: convene.example\r\nConnection: close\r\n\r\n',
          ),
        );
        let read = '';
        socket.on('data', (chunk) => {
          read += chunk.toString();
        });
        socket.on('end', () => resolve(read));
        socket.on('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      await expect.poll(() => lines.find((line) => line.includes('"request completed"'))).toBeDefined();
      const line = lines.find((l) => l.includes('"request completed"'))!;
      const text = formatLogLine(line, false);
      for (const logged of [line, text]) {
        expect(logged).not.toMatch(/user|pa55word|k3y/);
        expect(logged).toContain('http://[redacted]@convene.example/api/health?key=[redacted]&after=3');
      }
    });
    // Any scheme, in any case; a user name alone; no path; the host and port kept.
    expect(redactUrl('HTTP://u@h:80/hub/me/link/BCDF-GHJK')).toBe(
      'HTTP://[redacted]@h:80/hub/me/link/[redacted]',
    );
    expect(redactUrl('ftp://a:b@c@h?token=t')).toBe('ftp://[redacted]@h?token=[redacted]');
    expect(redactUrl('http://h:3000/x?after=1')).toBe('http://h:3000/x?after=1');
    // An origin-form path holding an @ is a path.
    expect(redactUrl('/hub/u:p@h/x')).toBe('/hub/u:p@h/x');
  });

  it('read a request target in absolute form as its path: a retry in the other form replays its answer, and its key is its client', async () => {
    expect(originForm({ url: 'HTTP://u:p@h:80/hub/x?after=1' })).toBe('/hub/x?after=1');
    expect(originForm({ url: 'http://h?limit=2' })).toBe('/?limit=2');
    expect(originForm({ url: '/hub/u:p@h/x' })).toBe('/hub/u:p@h/x');
    expect(originForm({ url: '*' })).toBe('*');

    const space = await h.createSpace();
    const { host } = new URL(h.baseUrl);
    /** One request over a socket of its own, its target in absolute form; its status and JSON body. */
    const absolute = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
      new Promise<{ status: number; remaining: number; body: Record<string, unknown> }>((resolve, reject) => {
        const payload = body === undefined ? undefined : JSON.stringify(body);
        // Node's client writes `path` as the request target, here in absolute form.
        const request = httpRequest(
          {
            host: new URL(h.baseUrl).hostname,
            port: Number(new URL(h.baseUrl).port),
            method,
            path: `http://agent:secret@${host}${path}`,
            headers: { ...headers, ...(payload === undefined ? {} : { 'Content-Type': 'application/json' }) },
          },
          (answer) => {
            let text = '';
            answer.setEncoding('utf8');
            answer.on('data', (chunk: string) => {
              text += chunk;
            });
            answer.on('end', () => {
              try {
                resolve({
                  status: answer.statusCode!,
                  remaining: Number(answer.headers['ratelimit-remaining']),
                  body: JSON.parse(text),
                });
              } catch (error) {
                reject(error);
              }
            });
          },
        );
        request.on('error', reject);
        request.end(payload);
      });

    // The same send, first in origin form, then retried in absolute form: one message, one answer.
    const path = `/hub/space/${space.spaceId}/messages`;
    const first = await h.post(path, {
      key: space.ownerKey,
      body: { content: 'once' },
      headers: { 'idempotency-key': 'absolute-retry' },
    });
    expect(first.status).toBe(200);
    const retried = await absolute(
      'POST',
      path,
      { 'X-Private-Key': space.ownerKey, 'Idempotency-Key': 'absolute-retry' },
      { content: 'once' },
    );
    expect(retried.status).toBe(200);
    expect(retried.body.messageId).toBe(first.body.messageId);
    const listed = await h.get(`${path}?limit=10`, { key: space.ownerKey });
    expect(listed.body.messages.filter((m: { content: string }) => m.content === 'once')).toHaveLength(1);

    // Its key is its client for the rate limit, as in origin form: its bucket, not the address's.
    const read = await absolute('GET', `/hub/space/${space.spaceId}`, { 'X-Private-Key': space.ownerKey });
    expect(read.status).toBe(200);
    const keyed = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect(read.remaining).toBe(Number(keyed.headers.get('ratelimit-remaining')) + 1);
  });

  it('keep the value of a position parameter only under the name the API reads', () => {
    // The API's own names, however encoded, keep their values.
    expect(redactUrl('/m?after=3&%61fter=4&limit=5&wait=0')).toBe('/m?after=3&%61fter=4&limit=5&wait=0');
    // Near-spellings are names of the client's own, which the API ignores: they may hold anything.
    expect(redactUrl('/m?after%20=s1&after+=s2&%20after=s3&After=s4&AFTER=s5&after%09=s6&aft%zzer=s7')).toBe(
      '/m?after%20=[redacted]&after+=[redacted]&%20after=[redacted]&After=[redacted]&AFTER=[redacted]&after%09=[redacted]&aft%zzer=[redacted]',
    );
  });

  it('redact the user code of a link request in the path the approval page reads it by', async () => {
    const { lines, options } = loggedAtInfo();
    await withServer(options, async ({ h: api }) => {
      await api.get('/hub/me/link/BCDF-GHJK?x=1');
      await api.post('/hub/me/link/approve', { body: { userCode: 'BCDF-GHJK' } });
      const log = lines.join('\n');
      expect(log).not.toContain('BCDF-GHJK');
      expect(log).toContain('/hub/me/link/[redacted]?x=[redacted]');
      expect(log).toContain('/hub/me/link/approve');
    });
  });
});
