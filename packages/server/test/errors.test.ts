import { ArtifactLockedError, SESSION_REQUIRED } from '@convene/core';
import { describe, expect, it } from 'vitest';
import { type ApiResponse, expectError, expectOk, type RequestOptions, useServer } from './helpers';
import { mintToken, signup } from './helpers/accounts';

/**
 * A JSON error as the spec shapes it, never HTML, with the policy headers and a code: the
 * framework's own refusals (a bad body, an unknown route, a crash) the generic one of their status.
 */
function expectJsonError(res: ApiResponse, status: number) {
  const generic = { 400: 'invalid_request', 404: 'not_found', 500: 'internal_error' } as const;
  expectError(res, status, generic[status as keyof typeof generic]);
  expect(res.text.trimStart().startsWith('<')).toBe(false);
  expect(Object.keys(res.body)).toContain('error');
  expect(res.headers.get('ratelimit-policy')).not.toBeNull();
}

const { srv, h } = useServer({
  routes: (app) => {
    app.get('/test/boom', async () => {
      throw new Error('connect ECONNREFUSED postgres://admin:hunter2@db.internal:5432 at /srv/app/db.js:42');
    });
    app.post('/test/boom', async () => {
      // Not even an Error.
      throw 'hunter2';
    });
    app.get('/test/upstream', async () => {
      throw Object.assign(new Error('upstream said hunter2'), { statusCode: 502 });
    });
    app.get('/test/locked', async () => {
      throw new ArtifactLockedError('11111111-1111-4111-8111-111111111111', '2030-01-01T00:10:00.000Z');
    });
  },
});

describe('bodies', () => {
  it('refuses malformed JSON with a JSON 400', async () => {
    for (const body of ['{"name":', 'not json', '{"a":1}}', '[1,2']) {
      const res = await h.post('/hub/space', { body, raw: true });
      expectJsonError(res, 400);
      expect(res.body.error).toMatch(/JSON/);
    }
  });

  it('refuses other content types with a JSON 400', async () => {
    const space = await h.createSpace();
    for (const type of [
      'text/plain',
      'application/xml',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ]) {
      const res = await h.post('/hub/space', {
        body: '{"name":"n","description":"d"}',
        raw: true,
        headers: { 'Content-Type': type },
      });
      expectJsonError(res, 400);
      expect(res.body.error).toMatch(/application\/json/);
      const write = await h.put(`/hub/space/${space.spaceId}`, {
        key: space.ownerKey,
        body: 'name=x',
        raw: true,
        headers: { 'Content-Type': type },
      });
      expectJsonError(write, 400);
      // sendMessage, bound as its own route (rest/direct.ts), says the same and writes nothing.
      const send = await h.post(`/hub/space/${space.spaceId}/messages`, {
        key: space.ownerKey,
        body: 'hello',
        raw: true,
        headers: { 'Content-Type': type },
      });
      expectJsonError(send, 400);
      expect(send.body.error).toMatch(/application\/json/);
      // And a raw route, which reads its body itself.
      const ask = await h.post('/ask', {
        body: 'how do I join?',
        raw: true,
        headers: { 'Content-Type': type },
      });
      expectJsonError(ask, 400);
      expect(ask.body.error).toMatch(/application\/json/);
    }
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect(view.body.name).toBe('Test space');
    const listed = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    expect(listed.body.messages).toEqual([]);
  });

  it('takes an empty body of any type as no body (`curl -d ""` sends a form type)', async () => {
    const space = await h.createSpace();
    for (const type of ['application/x-www-form-urlencoded', 'text/plain']) {
      const headers = { 'Content-Type': type };
      // A write that takes no body runs.
      const invited = await h.post(`/hub/space/${space.spaceId}/invite`, {
        key: space.ownerKey,
        body: '',
        raw: true,
        headers,
      });
      expect(invited.status).toBe(200);
      expect(invited.body.publicInvitationKey).toEqual(expect.any(String));
      // One that takes a body says what is missing, as for an empty JSON body, and writes nothing.
      const send = await h.post(`/hub/space/${space.spaceId}/messages`, {
        key: space.ownerKey,
        body: '',
        raw: true,
        headers,
      });
      expectJsonError(send, 400);
      expect(send.body.error).toMatch(/content/);
      // A body, however short, is still typed.
      const typed = await h.post(`/hub/space/${space.spaceId}/invite`, {
        key: space.ownerKey,
        body: ' ',
        raw: true,
        headers,
      });
      expectJsonError(typed, 400);
      expect(typed.body.error).toMatch(/application\/json/);
    }
    const listed = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    expect(listed.body.messages).toEqual([]);
  });

  it('reads the JSON media type in any case, as RFC 9110 has it, on every route', async () => {
    const space = await h.createSpace();
    for (const type of [
      'Application/JSON',
      'APPLICATION/JSON; charset=UTF-8',
      'application/Json;charset=utf-8',
    ]) {
      const headers = { 'Content-Type': type };
      const created = await h.post('/hub/space', {
        body: '{"name":"n","description":"d"}',
        raw: true,
        headers,
      });
      expectOk(created);
      const updated = await h.put(`/hub/space/${space.spaceId}`, {
        key: space.ownerKey,
        body: '{"agenda":"cased"}',
        raw: true,
        headers,
      });
      expectOk(updated);
      expectOk(await h.post('/ask', { body: '{"query":"space"}', raw: true, headers }));
    }
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect(view.body.agenda).toBe('cased');
  });

  it('accepts a body up to 2 MiB and refuses a larger one with a JSON 400', async () => {
    const near = JSON.stringify({ name: 'n', description: 'd', agenda: 'x'.repeat(2 * 1024 * 1024 - 100) });
    expect(Buffer.byteLength(near)).toBeLessThanOrEqual(2 * 1024 * 1024);
    const within = await h.post('/hub/space', { body: near, raw: true });
    // Parsed, then refused by the contract's field limit: not by the body limit.
    expectJsonError(within, 400);
    expect(within.body.error).not.toMatch(/too large/);

    const over = JSON.stringify({ name: 'n', description: 'd', agenda: 'x'.repeat(2 * 1024 * 1024) });
    const tooLarge = await h.post('/hub/space', { body: over, raw: true });
    expectJsonError(tooLarge, 400);
    expect(tooLarge.body.error).toMatch(/too large/);
  });

  it('refuses an oversized body sent without a length (chunked)', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(256 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"name":"n","description":"'));
        if (sent++ < 12) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const response = await fetch(`${srv.url}/hub/space`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    const text = await response.text();
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/application\/json/);
    expect(JSON.parse(text).error).toMatch(/too large/);
  });

  it('treats an empty body on a body-less write as no body', async () => {
    const space = await h.createSpace();
    const res = await h.request('POST', `/hub/space/${space.spaceId}/invite`, {
      key: space.ownerKey,
      headers: { 'Content-Type': 'application/json' },
    });
    expectOk(res);
  });
});

describe('routes and methods', () => {
  it('answers unknown routes with a JSON 404', async () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      expectJsonError(await h.request(method, '/no/such/route'), 404);
      expectJsonError(
        await h.request(method, '/hub/space/00000000-0000-4000-8000-000000000000/nothing'),
        404,
      );
    }
  });

  it('answers a method a path does not serve with a JSON 404', async () => {
    expectJsonError(await h.patch('/hub/space', { body: {} }), 404);
    expectJsonError(await h.put('/hub/space', { body: {} }), 404);
    expectJsonError(await h.delete('/api/health'), 404);
    expectJsonError(await h.request('OPTIONS', '/hub/space'), 404);
    expectJsonError(await h.post('/.well-known/deprecation-policy', { body: {} }), 404);
  });

  it('says which methods a path takes when asked with another (still the 404 of a route it does not serve)', async () => {
    const space = await h.createSpace();
    const artifact = `/hub/space/${space.spaceId}/artifact/00000000-0000-4000-8000-000000000000`;
    const put = await h.put(artifact, { key: space.ownerKey, body: { content: 'x' } });
    expectJsonError(put, 404);
    expect(put.body.error).toMatch(/^no (such )?route.*: this path takes GET or PATCH, not PUT$/);
    const health = await h.delete('/api/health');
    expectJsonError(health, 404);
    expect(health.body.error).toMatch(/: this path takes GET, not DELETE$/);
    const listed = await h.request('PATCH', `/hub/space/${space.spaceId}/messages`, {
      key: space.ownerKey,
      body: {},
    });
    expect(listed.body.error).toMatch(/: this path takes GET or POST, not PATCH$/);
    // A path nothing serves says nothing more.
    const nothing = await h.get('/hub/space/nothing/at/all');
    expectJsonError(nothing, 404);
    expect(nothing.body.error).toBe('no route for GET /hub/space/nothing/at/all');
  });

  it('answers HEAD as the GET it mirrors, without a body', async () => {
    const health = await h.request('HEAD', '/api/health');
    expect(health.status).toBe(200);
    expect(health.text).toBe('');
    expect(health.headers.get('api-version')).toBe('1');
    // Its Content-Length is the GET's (RFC 9110 8.6: that number, or none), on every kind of route.
    for (const path of ['/api/health', '/.well-known/deprecation-policy', '/openapi.json'])
      expect((await h.request('HEAD', path)).headers.get('content-length'), path).toBe(
        String(Buffer.byteLength((await h.get(path)).text)),
      );
    const space = await h.createSpace();
    const owned = { key: space.ownerKey };
    const got = await h.get(`/hub/space/${space.spaceId}`, owned);
    expect(
      (await h.request('HEAD', `/hub/space/${space.spaceId}`, owned)).headers.get('content-length'),
    ).toBe(String(Buffer.byteLength(got.text)));
    const anonymous = await h.request('HEAD', `/hub/space/${space.spaceId}`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata=/);
    expect(anonymous.text).toBe('');
    expect((await h.request('HEAD', `/hub/space/${space.spaceId}`, { key: space.ownerKey })).status).toBe(
      200,
    );
    expect((await h.request('HEAD', '/.well-known/deprecation-policy')).status).toBe(200);
    expect((await h.request('HEAD', '/no/such/route')).status).toBe(404);
  });

  it('answers a URL it cannot decode with a JSON 400', async () => {
    expectJsonError(await h.get('/hub/space/%zz'), 400);
  });
});

describe('server errors', () => {
  it('answer 500 with a generic message that leaks nothing', async () => {
    for (const res of [await h.get('/test/boom'), await h.post('/test/boom', { body: {} })]) {
      expectJsonError(res, 500);
      expect(res.body).toEqual({ error: 'internal error', code: 'internal_error' });
      expect(res.text).not.toMatch(/hunter2|ECONNREFUSED|db\.js|stack/);
    }
  });

  it('never pass a thrown 5xx status and message through', async () => {
    const res = await h.get('/test/upstream');
    expectJsonError(res, 500);
    expect(res.body).toEqual({ error: 'internal error', code: 'internal_error' });
  });

  it('leave domain errors of raw routes mapped like procedures', async () => {
    const res = await h.get('/test/locked');
    expectJsonError(res, 423);
    expect(res.body).toEqual({
      error: 'artifact is locked by another participant',
      code: 'lock_held',
      lockedBy: '11111111-1111-4111-8111-111111111111',
      lockExpiresAt: '2030-01-01T00:10:00.000Z',
    });
  });
});

describe('credentials sent in the wrong place', () => {
  it('says where the space key goes when it came as a bearer, a query parameter or a body field (401, key_required)', async () => {
    const space = await h.createSpace();
    const path = `/hub/space/${space.spaceId}`;
    const cases: [Parameters<typeof h.get>[1], string, string][] = [
      [{ headers: { Authorization: `Bearer ${space.ownerKey}` } }, 'GET', 'not as Authorization: Bearer'],
      [{}, 'GET?key', 'not in the query parameter "key"'],
    ];
    for (const [options, how, said] of cases) {
      const res = await h.get(how.endsWith('?key') ? `${path}?key=${space.ownerKey}` : path, options);
      expectError(res, 401, 'key_required');
      expect(res.body.error).toBe(
        `X-Private-Key is required: send the space key in the X-Private-Key header, ${said}${said.includes('Bearer') ? ' (which carries only the dashboard JWT, on /hub/me routes)' : ''}`,
      );
      expect(res.text).not.toContain(space.ownerKey);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata=/);
    }
    const inBody = await h.post(`${path}/messages`, { body: { content: 'hi', privateKey: space.ownerKey } });
    expectError(inBody, 401, 'key_required');
    expect(inBody.body.error).toBe(
      'X-Private-Key is required: send the space key in the X-Private-Key header, not in the body field "privateKey"',
    );
    expect(inBody.text).not.toContain(space.ownerKey);
    // Nothing sent anywhere: the plain answer.
    const bare = await h.get(path);
    expect(bare.body.error).toBe('X-Private-Key is required');
    expect((await h.get(`${path}/messages`, { key: space.ownerKey })).body.messages).toEqual([]);
  });

  it('refuses a keyed operation asked with no key (401) before reading its body, which a key holder gets a 400 for', async () => {
    const space = await h.createSpace();
    const path = `/hub/space/${space.spaceId}`;
    const writes: [string, string, object][] = [
      ['PUT', path, { name: '' }],
      ['POST', `${path}/messages`, {}],
      ['POST', `${path}/inbox/ack`, {}],
      ['POST', `${path}/join`, { name: 5 }],
      ['POST', `${path}/artifact`, { name: '' }],
    ];
    for (const [method, url, body] of writes) {
      const keyless = await h.request(method, url, { body });
      expectError(keyless, 401, 'key_required');
      expect(keyless.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata=/);
      const keyed = await h.request(method, url, { body, key: space.ownerKey });
      expect({ url, status: keyed.status }).toEqual({ url, status: 400 });
    }
    // Bodies that do not even parse: the missing key is still said first, on the adapter's routes
    // and on the direct one (sendMessage) alike.
    const broken: [string, RequestOptions][] = [
      ['malformed JSON', { body: '{"content":', raw: true }],
      ['an array', { body: '[1]', raw: true }],
      ['U+0000', { body: '{"content":"a\\u0000b","name":"a\\u0000b"}', raw: true }],
      ['nested 65 deep', { body: `${'{"a":'.repeat(65)}1${'}'.repeat(65)}`, raw: true }],
      [
        'a form',
        { body: 'content=hi', raw: true, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } },
      ],
    ];
    for (const [method, url] of [writes[0]!, writes[1]!, writes[3]!]) {
      for (const [what, options] of broken) {
        const keyless = await h.request(method, url, options);
        expect({ url, what, status: keyless.status, code: keyless.body.code }).toEqual({
          url,
          what,
          status: 401,
          code: 'key_required',
        });
        const keyed = await h.request(method, url, { ...options, key: space.ownerKey });
        expect({ url, what, status: keyed.status }).toEqual({ url, what, status: 400 });
      }
    }
    // The stream: no key is said before a timestamp or Last-Event-ID it cannot read.
    for (const options of [{ query: '?timestamp=yesterday' }, { headers: { 'Last-Event-ID': 'abc' } }]) {
      const url = `${path}/messages/stream${options.query ?? ''}`;
      const keyless = await h.request('GET', url, { headers: options.headers ?? {} });
      expectError(keyless, 401, 'key_required');
      const keyed = await h.request('GET', url, { headers: options.headers ?? {}, key: space.ownerKey });
      expect(keyed.status).toBe(400);
    }
    // The dashboard's routes and key recovery: no JWT (nor usr_ token) is said before the body.
    const tokens = await h.post('/hub/me/tokens', { body: { name: 5 } });
    expectError(tokens, 401);
    expect(tokens.body.error).toBe(SESSION_REQUIRED);
    const approve = await h.post('/hub/me/link/approve', { body: '{"userCode":', raw: true });
    expectError(approve, 401);
    expect(approve.body.error).toBe(SESSION_REQUIRED);
  });

  it('names a user token or a dashboard JWT sent as X-Private-Key (401, key_unknown), and a usr_ token sent as the bearer of key recovery', async () => {
    const space = await h.createSpace();
    const human = await signup(h);
    const { token } = await mintToken(h, human);
    const asKey = await h.get(`/hub/space/${space.spaceId}`, { key: token });
    expectError(asKey, 401, 'key_unknown');
    expect(asKey.body.error).toMatch(
      /^unknown key for this space: this is a usr_ API token \(identity only, sent as X-User-Token on createSpace and joinSpace\); X-Private-Key takes a key of this space/,
    );
    expect(asKey.text).not.toContain(token);
    const jwt = await h.get(`/hub/space/${space.spaceId}`, { key: human.jwt });
    expectError(jwt, 401, 'key_unknown');
    expect(jwt.body.error).toMatch(/^unknown key for this space: this is a dashboard session JWT/);
    const other = await h.get(`/hub/space/${space.spaceId}`, { key: 'f'.repeat(64) });
    expect(other.body.error).toBe('unknown key for this space');

    const recovery = await h.get(`/hub/space/${space.spaceId}/key`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expectError(recovery, 401);
    expect(recovery.body.error).toBe(
      'a usr_ API token goes in the X-User-Token header here, not Authorization: Bearer (which carries the dashboard JWT)',
    );
  });
});
