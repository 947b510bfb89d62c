import { randomBytes, randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { FakeClock, type IdempotencyStore, rowsOf, SqlIdempotencyStore } from '@convene/core';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { hashCredential, sha256 } from '../src/http/client';
import { idempotencyScope } from '../src/http/idempotency';
import { type ApiResponse, effectRoutes, expectError, expectOk, onPostgres, useServer } from './helpers';
import { signup, startLink } from './helpers/accounts';

const newKey = () => randomBytes(32).toString('hex');
const replayed = (res: ApiResponse) => res.headers.get('idempotency-replayed');

const effects = effectRoutes();
const clock = new FakeClock();

/**
 * The server's own records, except that `get` can be made to miss once: what a duplicate sees when
 * it looks just before the first request's record commits (on another node, an instant earlier).
 */
class LookingTooEarly implements IdempotencyStore {
  missNext = false;
  private records: IdempotencyStore | undefined;
  private get target(): IdempotencyStore {
    this.records ??= new SqlIdempotencyStore(srv.server.database.db, srv.server.deps.box);
    return this.records;
  }
  get(scope: string, now: Date) {
    if (!this.missNext) return this.target.get(scope, now);
    this.missNext = false;
    return Promise.resolve(undefined);
  }
  claim(...args: Parameters<IdempotencyStore['claim']>) {
    return this.target.claim(...args);
  }
  complete(...args: Parameters<IdempotencyStore['complete']>) {
    return this.target.complete(...args);
  }
  recordRefusal(...args: Parameters<IdempotencyStore['recordRefusal']>) {
    return this.target.recordRefusal(...args);
  }
  sweep(...args: Parameters<IdempotencyStore['sweep']>) {
    return this.target.sweep(...args);
  }
}
const idempotency = new LookingTooEarly();

const { srv, h } = useServer({
  routes: effects.register,
  clock,
  config: { idempotencyWaitMs: 1_500, policySweepIntervalMs: 100 },
  policies: { idempotency },
});

const records = async () =>
  Number(
    rowsOf<{ n: number | string }>(
      await srv.server.database.db.execute(sql`select count(*) as n from idempotency_records`),
    )[0]?.n,
  );

describe('a retry with the same Idempotency-Key', () => {
  it('replays status, headers and body without running again', async () => {
    const key = newKey();
    const send = () =>
      h.post('/test/effect/replay', {
        key,
        body: { a: 1 },
        headers: { 'Idempotency-Key': randomUUIDFor('replay') },
      });
    const first = await send();
    expect(first.status).toBe(201);
    expect(replayed(first)).toBeNull();
    const second = await send();
    expect(effects.runs('replay')).toBe(1);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.text).toBe(first.text);
    expect(replayed(second)).toBe('true');
    expect(second.headers.get('location')).toBe('/things/replay/1');
    expect(second.headers.get('x-effect')).toBe('1');
    expect(second.headers.get('content-type')).toBe(first.headers.get('content-type'));
    // The policy headers are fresh: the replay is a request like any other.
    expect(second.headers.get('api-version')).toBe('1');
    expect(Number(second.headers.get('ratelimit-remaining'))).toBe(
      Number(first.headers.get('ratelimit-remaining')) - 1,
    );
  });

  it('replays a real write: the invitation is minted once', async () => {
    const space = await h.createSpace();
    const headers = { 'Idempotency-Key': randomUUID() };
    const first = await h.post(`/hub/space/${space.spaceId}/invite`, { key: space.ownerKey, headers });
    expectOk(first);
    const retry = await h.post(`/hub/space/${space.spaceId}/invite`, { key: space.ownerKey, headers });
    expectOk(retry);
    expect(replayed(retry)).toBe('true');
    expect(retry.body).toEqual(first.body);
    const invitations = rowsOf<{ n: number | string }>(
      await srv.server.database.db.execute(
        sql`select count(*) as n from invitations where space_id = ${space.spaceId}`,
      ),
    );
    expect(Number(invitations[0]?.n)).toBe(1);
  });

  it('replays a message send: the message is posted once', async () => {
    const space = await h.createSpace();
    const headers = { 'Idempotency-Key': randomUUID() };
    const body = { content: 'only once', type: 'text' };
    const first = await h.post(`/hub/space/${space.spaceId}/messages`, {
      key: space.ownerKey,
      body,
      headers,
    });
    expectOk(first);
    const retry = await h.post(`/hub/space/${space.spaceId}/messages`, {
      key: space.ownerKey,
      body,
      headers,
    });
    expect(replayed(retry)).toBe('true');
    expect(retry.body.messageId).toBe(first.body.messageId);
    const list = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    expect(list.body.messages.map((m: { content: string }) => m.content)).toEqual(['only once']);
  });

  it('runs nothing for a retry whose client left before its replay went out: a send, a document write', async () => {
    // The retry's replay is answered by a hook, whose answer then waits on its onSend hooks (a
    // send's rate-limit count goes to the database); its client gone, Fastify ran the handler
    // meanwhile, without the guard, and the message was posted again (a fault trial: a client
    // that gave up on a frozen node, whose buffered retry ran once the node woke).
    const space = await h.createSpace();
    const doc = await h.post(`/hub/space/${space.spaceId}/artifact`, {
      key: space.ownerKey,
      body: { name: 'Once', type: 'markdown', content: 'v1' },
    });
    expectOk(doc);
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/artifact/${doc.body.id}/lock`, { key: space.ownerKey }),
    );
    const writes = [
      [`/hub/space/${space.spaceId}/messages`, 'POST', { content: 'only once', type: 'text' }],
      [`/hub/space/${space.spaceId}/artifact/${doc.body.id}`, 'PATCH', { content: 'v2' }],
    ] as const;
    for (const [path, method, body] of writes) {
      const headers = { 'Idempotency-Key': randomUUID() };
      const first = await h.request(method, path, { key: space.ownerKey, body, headers });
      expectOk(first);
      // The same request again, from a client that closes its end as soon as it has sent it.
      const text = JSON.stringify(body);
      const socket = connect(Number(new URL(srv.listenUrl).port), '127.0.0.1');
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      socket.on('error', () => {});
      socket.write(
        `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
          `X-Private-Key: ${space.ownerKey}\r\nIdempotency-Key: ${headers['Idempotency-Key']}\r\n` +
          `Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
      );
      // Gone while the server looks up the record: a reset, as a client that gave up.
      await new Promise((resolve) => setTimeout(resolve, 5));
      socket.resetAndDestroy();
    }
    // Whatever the retries might have written is committed by now.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const list = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    expect(list.body.messages.map((m: { content: string }) => m.content)).toEqual(['only once']);
    const written = await h.get(`/hub/space/${space.spaceId}/artifact/${doc.body.id}`, {
      key: space.ownerKey,
    });
    expect(written.body).toMatchObject({ version: 2, content: 'v2' });
  });

  it('replays a closing: the retry does not meet the closed space', async () => {
    const space = await h.createSpace();
    const headers = { 'Idempotency-Key': randomUUID() };
    const first = await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey, headers });
    expectOk(first);
    const retry = await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey, headers });
    expectOk(retry);
    expect(replayed(retry)).toBe('true');
    // Without the key, the second close is a new request and meets the closed space.
    const fresh = await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect([401, 409]).toContain(fresh.status);
  });

  it('answers a guarded write as an unguarded one: 201 for a minted token, 204 without a body for its revocation, and so do their replays', async () => {
    const human = await signup(h);
    const headers = { ...human.auth, 'Idempotency-Key': randomUUID() };
    const first = await h.post('/hub/me/tokens', { headers, body: { name: 'once' } });
    expectOk(first, 201);
    const retry = await h.post('/hub/me/tokens', { headers, body: { name: 'once' } });
    expectOk(retry, 201);
    expect(replayed(retry)).toBe('true');
    expect(retry.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(retry.text).toBe(first.text);
    const revoke = { ...human.auth, 'Idempotency-Key': randomUUID() };
    const revoked = await h.delete(`/hub/me/tokens/${first.body.id}`, { headers: revoke });
    expectOk(revoked, 204);
    expect(revoked.text).toBe('');
    const again = await h.delete(`/hub/me/tokens/${first.body.id}`, { headers: revoke });
    expectOk(again, 204);
    expect(replayed(again)).toBe('true');
    expect(again.text).toBe('');
    // A refusal is stored in the same way: the same 401 (and its header) again.
    const space = await h.createSpace();
    const path = `/hub/space/${space.spaceId}/invite`;
    const refusal = { 'Idempotency-Key': randomUUID() };
    const refused = await h.post(path, { key: 'inv_unknown', headers: refusal });
    expectError(refused, 401);
    const twice = await h.post(path, { key: 'inv_unknown', headers: refusal });
    expectError(twice, 401);
    expect(replayed(twice)).toBe('true');
    expect(twice.headers.get('www-authenticate')).toBe(refused.headers.get('www-authenticate'));
  });

  it('replays a stored 4xx too', async () => {
    const key = newKey();
    const headers = { 'Idempotency-Key': randomUUID() };
    const first = await h.put('/test/effect/refused', { key, body: { status: 409 }, headers });
    expectError(first, 409);
    const retry = await h.put('/test/effect/refused', { key, body: { status: 409 }, headers });
    expectError(retry, 409);
    expect(replayed(retry)).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(effects.runs('refused')).toBe(1);
  });

  it('replays a refusal stored before error bodies had codes with the code it has now', async () => {
    // Records written before 2026-11-26 hold `{error, ...details}`: replayed within their 24 h,
    // each gets the specific code its details name, else the generic one of its status.
    const store = new SqlIdempotencyStore(srv.server.database.db, srv.server.deps.box);
    const key = newKey();
    const held = { lockedBy: randomUUID(), lockExpiresAt: '2030-01-01T00:10:00.000Z' };
    const stored = [
      [423, { error: 'artifact is locked by another participant', ...held }, 'lock_held'],
      [423, { error: 'you do not hold the lock on this artifact' }, 'lock_not_held'],
      [
        409,
        { error: 'baseVersion 1 is not the current version 2; nothing was written', version: 2 },
        'version_conflict',
      ],
      [
        409,
        { error: 'cannot approve a participant who is already active', status: 'active' },
        'participant_status_conflict',
      ],
      [409, { error: 'space is closed' }, 'conflict'],
      [404, { error: 'artifact not found' }, 'not_found'],
      [410, { error: 'link request expired' }, 'gone'],
    ] as const;
    for (const [n, [status, old, code]] of stored.entries()) {
      const path = `/test/effect/uncoded-${n}`;
      const idempotencyKey = randomUUID();
      const now = clock.now();
      await store.recordRefusal(
        {
          scope: idempotencyScope('PUT', path, hashCredential(key), idempotencyKey),
          // What the policy hashes: a newline, then the canonical JSON body.
          requestHash: sha256(`\n${JSON.stringify({ status })}`),
          now,
          expiresAt: new Date(now.getTime() + 3600_000),
        },
        { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(old) },
      );
      const retry = await h.put(path, {
        key,
        body: { status },
        headers: { 'Idempotency-Key': idempotencyKey },
      });
      expectError(retry, status, code);
      expect(replayed(retry)).toBe('true');
      expect(retry.body).toEqual({ ...old, code });
      expect(Object.keys(retry.body).slice(0, 2)).toEqual(['error', 'code']);
      expect(effects.runs(`uncoded-${n}`)).toBe(0);
    }
  });

  it('is the same request whatever the order of its JSON fields', async () => {
    const key = newKey();
    const headers = { 'Idempotency-Key': randomUUID() };
    await h.patch('/test/effect/order', {
      key,
      body: { a: 1, b: { c: 2, d: [1, { e: 3, f: 4 }] } },
      headers,
    });
    const retry = await h.request('PATCH', '/test/effect/order', {
      key,
      body: '{ "b": { "d": [1, { "f": 4, "e": 3 }], "c": 2 }, "a": 1 }',
      raw: true,
      headers,
    });
    expect(replayed(retry)).toBe('true');
    expect(effects.runs('order')).toBe(1);
  });
});

// One fresh key per name, so reruns of a test never meet old records.
const keysByName = new Map<string, string>();
function randomUUIDFor(name: string): string {
  let key = keysByName.get(name);
  if (!key) {
    key = randomUUID();
    keysByName.set(name, key);
  }
  return key;
}

describe('a retry whose key stopped working', () => {
  /** A write made with `key` under an Idempotency-Key, then a function that retries it as it was. */
  const guarded = async (path: string, key: string, body?: unknown) => {
    const headers = { 'Idempotency-Key': randomUUID() };
    const first = await h.post(path, { key, body, headers });
    expectOk(first);
    return (other = body) => h.post(path, { key, body: other, headers });
  };

  it('is answered 401 once its participant was removed or left, as the key is on every route, and never 422', async () => {
    const space = await h.createSpace();
    const messages = `/hub/space/${space.spaceId}/messages`;
    const kicked = await h.joinActive(space, { name: 'Kicked' });
    const resendKicked = await guarded(messages, kicked.key, { content: 'before the kick' });
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${kicked.participantId}/kick`, {
        key: space.ownerKey,
      }),
    );
    const kickedRetry = await resendKicked();
    expectError(kickedRetry, 401, 'participant_removed');
    expect(replayed(kickedRetry)).toBeNull();
    expectError(await resendKicked({ content: 'something else' }), 401, 'participant_removed');

    const left = await h.joinActive(space, { name: 'Left' });
    const artifactId = await h.createArtifact(space, 'plan', '# Plan\n');
    const relock = await guarded(`/hub/space/${space.spaceId}/artifact/${artifactId}/lock`, left.key);
    expectOk(await h.post(`/hub/space/${space.spaceId}/leave`, { key: left.key }));
    // The lock went with its holder: no replay says it is held.
    expectError(await relock(), 401, 'participant_left');
    // The message was sent all the same, once.
    const list = await h.get(messages, { key: space.ownerKey });
    expect(
      list.body.messages.filter((m: { content: string }) => m.content === 'before the kick'),
    ).toHaveLength(1);
  });

  it('meets the closed space as the write would: 409 where its table lists 409, else 401', async () => {
    const space = await h.createSpace();
    const base = `/hub/space/${space.spaceId}`;
    const artifactId = await h.createArtifact(space, 'notes', 'text');
    const resend = await guarded(`${base}/messages`, space.ownerKey, { content: 'hello' });
    const reinvite = await guarded(`${base}/invite`, space.ownerKey);
    const relock = await guarded(`${base}/artifact/${artifactId}/lock`, space.ownerKey);
    expectOk(await h.delete(base, { key: space.ownerKey }));
    expectError(await resend(), 409, 'space_closed');
    expectError(await reinvite(), 409, 'space_closed');
    expectError(await relock(), 401, 'space_closed');
  });

  it('meets the expired space the same way', async () => {
    const space = await h.createSpace({ ttl: 60 });
    const reinvite = await guarded(`/hub/space/${space.spaceId}/invite`, space.ownerKey);
    clock.advance(61_000);
    expectError(await reinvite(), 409, 'space_expired');
  });

  it('is still replayed for the write that ended the key: a leave', async () => {
    const space = await h.createSpace();
    const member = await h.joinActive(space, { name: 'Leaving' });
    const leaveAgain = await guarded(`/hub/space/${space.spaceId}/leave`, member.key);
    const retry = await leaveAgain();
    expectOk(retry);
    expect(replayed(retry)).toBe('true');
  });

  it('is refused over MCP as over REST', async () => {
    const space = await h.createSpace();
    const member = await h.joinActive(space, { name: 'Kicked over MCP' });
    const call = (id: number) =>
      h.post('/mcp', {
        key: member.key,
        body: {
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: {
            name: 'send_message',
            arguments: { spaceId: space.spaceId, content: 'once', idempotencyKey: 'mcp-kick' },
          },
        },
        headers: { Accept: 'application/json, text/event-stream' },
      });
    expect((await call(1)).body.result.isError).toBeUndefined();
    expect((await call(2)).body.result._meta).toEqual({ 'convene/idempotentReplay': true });
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${member.participantId}/kick`, {
        key: space.ownerKey,
      }),
    );
    const after = await call(3);
    expect(after.body.result.isError).toBe(true);
    expect(after.body.result._meta['convene/error']).toMatchObject({
      status: 401,
      code: 'participant_removed',
    });
  });
});

describe('the same key with a different request', () => {
  it('answers 422 and runs nothing', async () => {
    const key = newKey();
    const headers = { 'Idempotency-Key': randomUUID() };
    expect((await h.post('/test/effect/mismatch', { key, body: { a: 1 }, headers })).status).toBe(201);
    const other = await h.post('/test/effect/mismatch', { key, body: { a: 2 }, headers });
    expectError(other, 422);
    expect(other.body.error).toMatch(/Idempotency-Key/);
    expect(effects.runs('mismatch')).toBe(1);
  });

  it('is the same request with a query parameter added: writes read none, and unknown ones are ignored', async () => {
    const key = newKey();
    const headers = { 'Idempotency-Key': randomUUID() };
    expect((await h.post('/test/effect/query', { key, body: { a: 1 }, headers })).status).toBe(201);
    const retry = await h.post('/test/effect/query?trace=1', { key, body: { a: 1 }, headers });
    expect(retry.status).toBe(201);
    expect(replayed(retry)).toBe('true');
    expect(effects.runs('query')).toBe(1);
  });

  it('answers 422 on a real update', async () => {
    const space = await h.createSpace();
    const headers = { 'Idempotency-Key': randomUUID() };
    expectOk(
      await h.put(`/hub/space/${space.spaceId}`, { key: space.ownerKey, body: { name: 'A' }, headers }),
    );
    expectError(
      await h.put(`/hub/space/${space.spaceId}`, { key: space.ownerKey, body: { name: 'B' }, headers }),
      422,
    );
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect(view.body.name).toBe('A');
  });

  it('answers 422 after a refused send too: a 400 is recorded, on the send route as on the others', async () => {
    const space = await h.createSpace();
    const path = `/hub/space/${space.spaceId}/messages`;
    for (const invalid of [{ content: '' }, {}, { content: 'x'.repeat(65_537) }]) {
      const headers = { 'Idempotency-Key': randomUUID() };
      const first = await h.post(path, { key: space.ownerKey, body: invalid, headers });
      expectError(first, 400);
      const again = await h.post(path, { key: space.ownerKey, body: invalid, headers });
      expectError(again, 400);
      expect(replayed(again)).toBe('true');
      expect(again.body).toEqual(first.body);
      expectError(await h.post(path, { key: space.ownerKey, body: { content: 'different' }, headers }), 422);
    }
    const list = await h.get(path, { key: space.ownerKey });
    expect(list.body.messages).toEqual([]);
  });
});

describe('the scope of a record', () => {
  it('is the credential: another caller never receives a stored response', async () => {
    const space = await h.createSpace();
    const headers = { 'Idempotency-Key': randomUUID() };
    expectOk(await h.post(`/hub/space/${space.spaceId}/invite`, { key: space.ownerKey, headers }));
    const stranger = await h.post(`/hub/space/${space.spaceId}/invite`, { key: newKey(), headers });
    expectError(stranger, 401);
    expect(replayed(stranger)).toBeNull();
    const other = newKey();
    const first = await h.post('/test/effect/scoped', { key: other, body: {}, headers });
    expect(replayed(first)).toBeNull();
    expect(first.body.n).toBe(1);
  });

  it('is the credential a write reads: a space key in the query alone is none, so its 401 is never replayed to the header that follows', async () => {
    const space = await h.createSpace();
    const headers = { 'Idempotency-Key': randomUUID() };
    const path = `/hub/space/${space.spaceId}/messages`;
    const body = { content: 'with the key where writes read it' };
    // Writes read their key from X-Private-Key only (`?key=` is for streams and agent cards).
    const inQuery = await h.post(`${path}?key=${space.ownerKey}`, { body, headers });
    expectError(inQuery, 401);
    const retry = await h.post(path, { key: space.ownerKey, body, headers });
    expectOk(retry);
    expect(replayed(retry)).toBeNull();
    // Recorded under the header's key: its own retry replays it.
    const again = await h.post(path, { key: space.ownerKey, body, headers });
    expect(replayed(again)).toBe('true');
    expect(again.body.messageId).toBe(retry.body.messageId);
  });

  it('is the method and the path', async () => {
    const key = newKey();
    const headers = { 'Idempotency-Key': randomUUID() };
    await h.post('/test/effect/p1', { key, body: {}, headers });
    const otherPath = await h.post('/test/effect/p2', { key, body: {}, headers });
    const otherMethod = await h.put('/test/effect/p1', { key, body: {}, headers });
    expect(replayed(otherPath)).toBeNull();
    expect(replayed(otherMethod)).toBeNull();
    expect(effects.runs('p1')).toBe(2);
    expect(effects.runs('p2')).toBe(1);
  });
});

describe('writes never replayed', () => {
  it('re-executes after a 5xx, which is never stored', async () => {
    const key = newKey();
    const headers = { 'Idempotency-Key': randomUUID() };
    expectError(await h.post('/test/effect/flaky', { key, body: { status: 500 }, headers }), 500);
    expectError(await h.post('/test/effect/flaky', { key, body: { status: 500 }, headers }), 500);
    expect(effects.runs('flaky')).toBe(2);
    // Nothing was stored: the key is free again, and a request that succeeds is stored.
    expect((await h.post('/test/effect/flaky', { key, body: { status: 201 }, headers })).status).toBe(201);
    expect(replayed(await h.post('/test/effect/flaky', { key, body: { status: 201 }, headers }))).toBe(
      'true',
    );
    expect(effects.runs('flaky')).toBe(3);
  });

  it('mints a fresh space on every createSpace, whatever credential comes with it', async () => {
    const headers = { 'Idempotency-Key': randomUUID(), 'X-User-Token': `usr_${newKey()}` };
    const body = { name: 'Twice', description: 'created twice' };
    const first = await h.post('/hub/space', { body, headers });
    const second = await h.post('/hub/space', { body, headers, key: newKey() });
    expectOk(first);
    expectOk(second);
    expect(second.body.spaceId).not.toBe(first.body.spaceId);
    expect(replayed(second)).toBeNull();
  });

  it('mints a fresh device code on every startLink', async () => {
    const headers = { 'Idempotency-Key': randomUUID(), 'X-User-Token': `usr_${newKey()}` };
    const first = await h.post('/hub/link/start', { body: { agentName: 'agent' }, headers });
    const second = await h.post('/hub/link/start', { body: { agentName: 'agent' }, headers });
    expectOk(first);
    expectOk(second);
    expect(second.body.deviceCode).not.toBe(first.body.deviceCode);
    expect(replayed(second)).toBeNull();
  });

  it('polls a link request afresh, and signs up and logs in every time, whatever credential comes with them', async () => {
    const headers = { 'Idempotency-Key': randomUUID(), 'X-User-Token': `usr_${newKey()}` };
    const link = await startLink(h);
    const pending = await h.post('/hub/link/poll', { body: { deviceCode: link.deviceCode }, headers });
    expect(pending.body).toEqual({ status: 'pending' });
    const human = await signup(h);
    expectOk(
      await h.post('/hub/me/link/approve', { headers: human.auth, body: { userCode: link.userCode } }),
    );
    // Not the first answer again: the token, which only this poll hands over.
    const approved = await h.post('/hub/link/poll', { body: { deviceCode: link.deviceCode }, headers });
    expect(approved.body).toMatchObject({ status: 'approved', token: expect.stringMatching(/^usr_/) });
    expect(replayed(approved)).toBeNull();
    const login = { email: human.email, password: human.password };
    const first = await h.post('/hub/auth/login', { body: login, headers });
    const wrong = await h.post('/hub/auth/login', { body: { ...login, password: 'not it at all' }, headers });
    expectOk(first);
    expect(wrong.status).toBe(401);
  });

  it('runs anonymous writes every time', async () => {
    const headers = { 'Idempotency-Key': randomUUID() };
    await h.post('/test/effect/anonymous', { body: {}, headers });
    const again = await h.post('/test/effect/anonymous', { body: {}, headers });
    expect(replayed(again)).toBeNull();
    expect(effects.runs('anonymous')).toBe(2);
  });
});

describe('hijacked replies', () => {
  it('covers the one call of a POST to /mcp as that call’s idempotencyKey, and never holds a call', async () => {
    const space = await h.createSpace();
    const headers = {
      'Idempotency-Key': randomUUID(),
      Accept: 'application/json, text/event-stream',
    };
    const call = (id: number, content: string, extra: Record<string, string> = {}) =>
      h.post('/mcp', {
        key: space.ownerKey,
        body: {
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'send_message', arguments: { spaceId: space.spaceId, content } },
        },
        headers: { ...headers, ...extra },
      });
    const first = await call(1, 'once');
    expect(first.status, first.text).toBe(200);
    expect(replayed(first)).toBeNull();
    // A retry (a client's next JSON-RPC id) gets the first answer, marked as a replay.
    const second = await call(2, 'once');
    expect(second.status, second.text).toBe(200);
    expect(replayed(second)).toBe('true');
    expect(second.body.id).toBe(2);
    expect(second.body.result.structuredContent.messageId).toBe(
      first.body.result.structuredContent.messageId,
    );
    expect(second.body.result._meta).toEqual({ 'convene/idempotentReplay': true });
    // The same key with other arguments: 422, as a tool error.
    const other = await call(3, 'other');
    expect(other.body.result.isError).toBe(true);
    expect(other.body.result._meta['convene/error']).toMatchObject({ status: 422 });
    // Another key runs: nothing is left claimed.
    expect((await call(4, 'twice', { 'Idempotency-Key': randomUUID() })).body.result.isError).toBeUndefined();
    const list = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    expect(list.body.messages.map((m: { content: string }) => m.content)).toEqual(['once', 'twice']);
    // A batch has one header for many calls: each call takes its own idempotencyKey argument.
    const batch = await h.post('/mcp', {
      key: space.ownerKey,
      body: [1, 2].map((id) => ({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'send_message', arguments: { spaceId: space.spaceId, content: `batch ${id}` } },
      })),
      headers,
    });
    expectError(batch, 400);
    expect(batch.body.error).toContain('idempotencyKey argument');
  });
});

describe('Idempotency-Key itself', () => {
  it('is refused with 400 over 255 characters, on every write', async () => {
    const long = { 'Idempotency-Key': 'k'.repeat(256) };
    const space = await h.createSpace();
    expectError(await h.post('/hub/space', { body: { name: 'n', description: 'd' }, headers: long }), 400);
    expectError(
      await h.post(`/hub/space/${space.spaceId}/invite`, { key: space.ownerKey, headers: long }),
      400,
    );
    expectError(await h.post('/test/effect/long', { body: {}, headers: long }), 400);
    expectError(await h.delete('/test/effect/long', { key: newKey(), headers: long }), 400);
    expect(effects.runs('long')).toBe(0);
    // Reads ignore it; 255 characters are fine.
    expectOk(await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey, headers: long }));
    const max = await h.post('/test/effect/long', {
      key: newKey(),
      body: {},
      headers: { 'Idempotency-Key': 'k'.repeat(255) },
    });
    expect(max.status).toBe(201);
  });

  it('is not a requirement', async () => {
    const key = newKey();
    await h.post('/test/effect/keyless', { key, body: {} });
    await h.post('/test/effect/keyless', { key, body: {} });
    expect(effects.runs('keyless')).toBe(2);
  });
});

describe('a duplicate arriving while the first is running', () => {
  it('answers as the first was when what refuses it (a mute, a kick) committed after the first ran', async () => {
    const space = await h.createSpace();
    const path = `/hub/space/${space.spaceId}/messages`;
    for (const action of ['mute', 'kick'] as const) {
      const member = await h.joinActive(space, { name: `Sent before the ${action}` });
      const headers = { 'Idempotency-Key': randomUUID() };
      const first = await h.post(path, {
        key: member.key,
        body: { content: `before the ${action}` },
        headers,
      });
      expectOk(first);
      const moderation = await h.post(
        `/hub/space/${space.spaceId}/participants/${member.participantId}/${action}`,
        {
          key: space.ownerKey,
        },
      );
      expectOk(moderation);
      // The duplicate looked for a record before the first's committed, then ran after the moderation.
      idempotency.missNext = true;
      const duplicate = await h.post(path, {
        key: member.key,
        body: { content: `before the ${action}` },
        headers,
      });
      expect(duplicate.status, duplicate.text).toBe(200);
      expect(replayed(duplicate)).toBe('true');
      expect(duplicate.body).toEqual(first.body);
      // Another request under the key, refused the same way, is told it reused the key.
      idempotency.missNext = true;
      const other = await h.post(path, { key: member.key, body: { content: 'something else' }, headers });
      expectError(other, 422);
    }
    const messages = await h.get(`${path}?limit=500`, { key: space.ownerKey });
    expect(
      messages.body.messages.filter((m: { content: string }) => m.content.startsWith('before the')),
    ).toHaveLength(2);
  });

  it('waits for the first and replays it', async () => {
    const gate = effects.hold('slow');
    const key = newKey();
    const headers = { 'Idempotency-Key': randomUUID() };
    const first = h.post('/test/effect/slow', { key, body: {}, headers });
    await gate.entered;
    const second = h.post('/test/effect/slow', { key, body: {}, headers });
    await new Promise((r) => setTimeout(r, 200));
    gate.release();
    const [a, b] = await Promise.all([first, second]);
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body).toEqual(a.body);
    expect(replayed(b)).toBe('true');
    expect(effects.runs('slow')).toBe(1);
  });

  it('gets 409 if the first is still running after the wait, and the replay later', async () => {
    const gate = effects.hold('stuck');
    const key = newKey();
    const headers = { 'Idempotency-Key': randomUUID() };
    const first = h.post('/test/effect/stuck', { key, body: {}, headers });
    await gate.entered;
    const started = Date.now();
    const second = await h.post('/test/effect/stuck', { key, body: {}, headers });
    expectError(second, 409);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    gate.release();
    expect((await first).status).toBe(201);
    const third = await h.post('/test/effect/stuck', { key, body: {}, headers });
    expect(replayed(third)).toBe('true');
    expect(effects.runs('stuck')).toBe(1);
  });

  it('still waits for the first when its client has gone away', async () => {
    const gate = effects.hold('abandoned');
    const key = newKey();
    const headers = {
      'Idempotency-Key': randomUUID(),
      'X-Private-Key': key,
      'Content-Type': 'application/json',
    };
    const controller = new AbortController();
    const first = fetch(`${srv.url}/test/effect/abandoned`, {
      method: 'POST',
      headers,
      body: '{}',
      signal: controller.signal,
    }).catch(() => 'aborted');
    await gate.entered;
    controller.abort();
    expect(await first).toBe('aborted');
    await new Promise((r) => setTimeout(r, 100));
    const retry = h.post('/test/effect/abandoned', {
      key,
      body: {},
      headers: { 'Idempotency-Key': headers['Idempotency-Key'] },
    });
    await new Promise((r) => setTimeout(r, 100));
    gate.release();
    const answer = await retry;
    expect(answer.status).toBe(201);
    expect(replayed(answer)).toBe('true');
    expect(effects.runs('abandoned')).toBe(1);
  });

  it('is refused with 422 at once if its body differs', async () => {
    const gate = effects.hold('busy');
    const key = newKey();
    const headers = { 'Idempotency-Key': randomUUID() };
    const first = h.post('/test/effect/busy', { key, body: { v: 1 }, headers });
    await gate.entered;
    const started = Date.now();
    expectError(await h.post('/test/effect/busy', { key, body: { v: 2 }, headers }), 422);
    // Without waiting the 10 s a duplicate with the same body may wait (a loaded machine's margin).
    expect(Date.now() - started).toBeLessThan(5_000);
    gate.release();
    await first;
  });
});

describe('records in the database', () => {
  it.runIf(onPostgres())(
    'are never left behind by a write that dies before committing: its duplicate runs at once',
    async () => {
      // A node claimed this write in its transaction and died (kill -9): PostgreSQL ends the
      // transaction with the connection, the record with it, and the duplicate waiting on it runs.
      const key = newKey();
      const idempotencyKey = randomUUID();
      const scope = idempotencyScope('POST', '/test/effect/orphan', hashCredential(key), idempotencyKey);
      const now = clock.now();
      let claimed!: (pid: number) => void;
      const holder = new Promise<number>((resolve) => (claimed = resolve));
      const dying = srv.server.database.db
        .transaction(async (tx) => {
          await tx.execute(sql`
            insert into idempotency_records (scope, request_hash, state, created_at, expires_at)
            values (${scope}, 'whatever', 'done', ${now.toISOString()}::timestamptz,
                    ${new Date(now.getTime() + 86_400_000).toISOString()}::timestamptz)`);
          const [row] = rowsOf<{ pid: number }>(await tx.execute(sql`select pg_backend_pid() as pid`));
          claimed(row!.pid);
          await new Promise(() => {}); // never commits
        })
        .catch(() => 'died');
      const pid = await holder;
      const retry = h.post('/test/effect/orphan', {
        key,
        body: {},
        headers: { 'Idempotency-Key': idempotencyKey },
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(effects.runs('orphan')).toBe(0);
      const killed = Date.now();
      await srv.server.database.db.execute(sql`select pg_terminate_backend(${pid})`);
      const answer = await retry;
      expect(answer.status).toBe(201);
      expect(replayed(answer)).toBeNull();
      // At once, not after the 10 s wait for a claim that is still running.
      expect(Date.now() - killed).toBeLessThan(5_000);
      expect(effects.runs('orphan')).toBe(1);
      expect(await dying).toBe('died');
    },
  );

  it('are replayed for 24 hours, then forgotten and swept', async () => {
    const key = newKey();
    const headers = { 'Idempotency-Key': randomUUID() };
    await h.post('/test/effect/day', { key, body: {}, headers });
    clock.advance(24 * 3600_000 - 1_000);
    expect(replayed(await h.post('/test/effect/day', { key, body: {}, headers }))).toBe('true');
    expect(await records()).toBeGreaterThan(0);
    clock.advance(1_000);
    const later = await h.post('/test/effect/day', { key, body: {}, headers });
    expect(replayed(later)).toBeNull();
    expect(effects.runs('day')).toBe(2);
    // Everything stored is now older than the new record; move past it and let the sweeper run.
    clock.advance(24 * 3600_000 + 1);
    const deadline = Date.now() + 5_000;
    while ((await records()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await records()).toBe(0);
  });

  it('keep no credential or key in the clear', async () => {
    const key = newKey();
    const idempotencyKey = randomUUID();
    await h.post('/test/effect/clear', {
      key,
      body: { secret: 'no' },
      headers: { 'Idempotency-Key': idempotencyKey },
    });
    const rows = rowsOf<{ scope: string; request_hash: string }>(
      await srv.server.database.db.execute(sql`select scope, request_hash from idempotency_records`),
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.scope).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(row)).not.toContain(key);
      expect(JSON.stringify(row)).not.toContain(idempotencyKey);
    }
  });

  it('keep the secrets a response showed once sealed, and still replay them', async () => {
    const space = await h.createSpace();
    const headers = { 'Idempotency-Key': randomUUID() };
    const first = await h.post(`/hub/space/${space.spaceId}/invite`, { key: space.ownerKey, headers });
    expectOk(first);
    const invitationKey: string = first.body.publicInvitationKey;
    const rows = rowsOf<{ body: string | null }>(
      await srv.server.database.db.execute(sql`select body from idempotency_records where state = 'done'`),
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.body ?? '').not.toContain(invitationKey);
    const retry = await h.post(`/hub/space/${space.spaceId}/invite`, { key: space.ownerKey, headers });
    expect(replayed(retry)).toBe('true');
    expect(retry.body.publicInvitationKey).toBe(invitationKey);
  });
});
