import { FakeClock } from '@convene/core';
import { AuthenticationError, ConflictError } from '@convene/sdk';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { expectAnswer, expectError, expectOk, idOf, sdkError, useServer, withServer } from './helpers';
import { bearer, mintToken, signup } from './helpers/accounts';

// Accounts as the SDK's auth and session use them; the exact signup answer, bad bodies, missing
// and wrong credentials and the JWT itself over raw HTTP.
const clock = new FakeClock('2030-01-01T00:00:00.000Z');

const { h, sdk } = useServer({ clock });

describe('signup', () => {
  it('creates an account and answers 201 with a dashboard JWT and the user', async () => {
    const res = await h.post('/hub/auth/signup', {
      body: { email: 'Ada.Lovelace@Example.com', password: 'correct horse', name: 'Ada' },
    });
    expectOk(res, 201);
    expect(res.body.user).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      email: 'ada.lovelace@example.com',
      name: 'Ada',
      createdAt: '2030-01-01T00:00:00.000Z',
    });
    expect(res.body.token.split('.')).toHaveLength(3);
    expect(res.body).not.toHaveProperty('user.passwordHash');
    expect(res.text).not.toContain('correct horse');
  });

  it('names the human after the email when no name is given', async () => {
    const res = await sdk
      .hub()
      .auth.signup({ email: 'grace@example.com', password: '12345678' })
      .withResponse();
    expectAnswer(res, 201);
    expect(res.data.user?.name).toBe('grace');
  });

  it('refuses a duplicate email, whatever its case, with 409', async () => {
    await signup(h, { email: 'dup@example.com' });
    await sdkError(
      sdk.hub().auth.signup({ email: 'DUP@example.COM', password: 'another-pass' }),
      ConflictError,
    );
  });

  it.each([
    [{ email: 'short@example.com', password: '1234567' }],
    [{ email: 'not-an-email', password: '12345678' }],
    [{ password: '12345678' }],
    [{ email: 'nopass@example.com' }],
    [{ email: 'long@example.com', password: 'x'.repeat(1025) }],
    [{ email: 'name@example.com', password: '12345678', name: '' }],
  ])('rejects %j with 400', async (body) => {
    expectError(await h.post('/hub/auth/signup', { body }), 400);
  });
});

describe('login', () => {
  it('logs in with the right password, in any case of the email', async () => {
    const human = await signup(h, { email: 'login@example.com', password: 'hunter2hunter2' });
    const res = await sdk
      .hub()
      .auth.login({ email: 'LOGIN@example.com', password: 'hunter2hunter2' })
      .withResponse();
    expectAnswer(res);
    expect(res.data.user).toMatchObject({ id: human.id, email: 'login@example.com' });
    const me = await res.data.me().withResponse();
    expectAnswer(me);
    expect(me.data.id).toBe(human.id);
  });

  it('answers 401 with WWW-Authenticate for a wrong password or an unknown email', async () => {
    await signup(h, { email: 'wrong@example.com', password: 'right-password' });
    const { auth } = sdk.hub();
    const wrong = await sdkError(
      auth.login({ email: 'wrong@example.com', password: 'wrong-password' }),
      AuthenticationError,
    );
    const unknown = await sdkError(
      auth.login({ email: 'nobody@example.com', password: 'whatever1' }),
      AuthenticationError,
    );
    // The same answer for both: a login does not tell who has an account.
    expect(unknown.body?.error).toBe(wrong.body?.error);
  });

  it('rejects a body without a password with 400', async () => {
    expectError(await h.post('/hub/auth/login', { body: { email: 'x@example.com' } }), 400);
  });

  it('checks four passwords of one address at a time at most: a burst beyond is 429, retry in a second', async () => {
    // A hash holds a worker thread for tens of milliseconds: a burst of wrong logins from one
    // address queued every other user's login behind it (core's passwordGate).
    await signup(h, { email: 'burst@example.com', password: 'right-password' });
    const burst = await Promise.all(
      Array.from({ length: 20 }, () =>
        h.post('/hub/auth/login', { body: { email: 'burst@example.com', password: 'wrong-password' } }),
      ),
    );
    const refused = burst.filter((res) => res.status === 429);
    expect(burst.filter((res) => res.status === 401).length).toBeGreaterThanOrEqual(4);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.length + burst.filter((res) => res.status === 401).length).toBe(20);
    for (const res of refused) {
      expectError(res, 429);
      expect(res.body).toMatchObject({ code: 'rate_limited', retryAfter: 1 });
      expect(res.body.error).toBe('too many password checks from this address at once: retry in a second');
      expect(res.headers.get('retry-after')).toBe('1');
    }
    // Once they are answered, the address logs in again.
    expectOk(
      await h.post('/hub/auth/login', { body: { email: 'burst@example.com', password: 'right-password' } }),
    );
  });
});

describe('dashboard JWT', () => {
  it('is an EdDSA JWT of the deployment (not of a node URL), verifiable with /.well-known/jwks.json, valid 12 hours', async () => {
    const human = await signup(h);
    const header = decodeProtectedHeader(human.jwt);
    expect(header).toMatchObject({ alg: 'EdDSA', typ: 'JWT' });
    expect(typeof header.kid).toBe('string');

    const jwks = await h.get('/.well-known/jwks.json');
    expectOk(jwks);
    expect(jwks.body.keys).toHaveLength(1);
    expect(jwks.body.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', kid: header.kid });
    expect(jwks.body.keys[0]).not.toHaveProperty('d');

    const { payload } = await jwtVerify(human.jwt, createLocalJWKSet(jwks.body), {
      currentDate: clock.now(),
    });
    expect(payload.iss).toMatch(/^urn:convene:deployment:[0-9a-f-]{36}$/);
    expect(payload.aud).toBe(payload.iss);
    expect(payload.sub).toBe(human.id);
    expect(payload.exp! - payload.iat!).toBe(12 * 60 * 60);
  });

  it('stops working when it expires', async () => {
    const human = await signup(h);
    expectOk(await h.get('/hub/me', { headers: human.auth }));
    clock.advance(12 * 60 * 60 * 1000 + 1000);
    try {
      expectError(await h.get('/hub/me', { headers: human.auth }), 401);
    } finally {
      clock.advance(-(12 * 60 * 60 * 1000 + 1000));
    }
  });

  it('is refused when forged: signed by another key, or tampered with', async () => {
    const human = await signup(h);
    const [head, body, signature] = human.jwt.split('.') as [string, string, string];
    const claims = decodeJwt(human.jwt);
    const tampered = Buffer.from(
      JSON.stringify({ ...claims, sub: '00000000-0000-4000-8000-000000000000' }),
    ).toString('base64url');
    expectError(await h.get('/hub/me', { headers: bearer(`${head}.${tampered}.${signature}`) }), 401);
    expectError(await h.get('/hub/me', { headers: bearer(`${head}.${body}.${'A'.repeat(86)}`) }), 401);
    await withServer({ clock, config: { secret: 'another-secret-0123456789' } }, async (other) => {
      const foreign = await signup(other.h);
      expectError(await h.get('/hub/me', { headers: foreign.auth }), 401);
    });
  });
});

describe('/hub/me/*', () => {
  const routes: [string, string, unknown?][] = [
    ['GET', '/hub/me'],
    ['GET', '/hub/me/spaces'],
    ['GET', '/hub/me/tokens'],
    ['POST', '/hub/me/tokens', {}],
    ['DELETE', '/hub/me/tokens/00000000-0000-4000-8000-000000000000'],
    ['POST', '/hub/me/link/approve', { userCode: 'BCDF-GHJK' }],
    ['POST', '/hub/me/link/deny', { userCode: 'BCDF-GHJK' }],
    ['GET', '/hub/me/link/BCDF-GHJK'],
  ];

  it.each(routes)('%s %s answers 401 with WWW-Authenticate without a session', async (method, path, body) => {
    const human = await signup(h);
    const token = await mintToken(h, human);
    const send = (headers: Record<string, string>) =>
      h.request(method, path, { headers, ...(body !== undefined ? { body } : {}) });
    expectError(await send({}), 401);
    expectError(await send(bearer('not.a.jwt')), 401);
    expectError(await send({ Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }), 401);
    // A usr_ token never substitutes for the dashboard JWT, however it is sent.
    expectError(await send(bearer(token.token)), 401);
    expectError(await send({ 'X-User-Token': token.token }), 401);
  });

  it('GET /hub/me answers the human', async () => {
    const human = await signup(h, { name: 'Linus' });
    const res = await sdk.hub().session(human.jwt).me().withResponse();
    expectAnswer(res);
    expect(res.data).toEqual({
      id: human.id,
      email: human.email,
      name: 'Linus',
      createdAt: expect.any(String),
    });
  });
});

describe('GET /hub/me/spaces', () => {
  it('lists the spaces created or joined with the human’s tokens, and nothing else', async () => {
    const human = await signup(h);
    const other = await signup(h);
    const agent = sdk.hub({ userToken: (await mintToken(h, human)).token });
    const otherAgent = sdk.hub({ userToken: (await mintToken(h, other)).token });

    const owned = await sdk.createSpace({ name: 'Owned', ttl: 3600 }, agent);
    await sdk.createSpace({ name: 'Anonymous' });
    await sdk.createSpace({ name: 'Someone else’s' }, otherAgent);
    // An invalid token is ignored: the space is created, linked to nobody.
    await sdk.createSpace({ name: 'Bad token' }, sdk.hub({ userToken: 'usr_nonsense' }));
    const host = await sdk.createSpace({ name: 'Hosted', ttl: 60 });
    const joined = await sdk.joinActive(host.owner, { name: 'Me' }, agent);

    const session = sdk.hub().session(human.jwt);
    const res = await session.spaces().withResponse();
    expectAnswer(res);
    expect(res.data.spaces).toHaveLength(2);
    const byName = Object.fromEntries(res.data.spaces.map((s) => [s.name, s]));
    expect(byName.Owned).toEqual({
      spaceId: owned.spaceId,
      name: 'Owned',
      state: 'open',
      role: 'owner',
      participantId: owned.ownerId,
      status: 'active',
      createdAt: clock.now().toISOString(),
      ttlRemaining: 3600,
    });
    expect(byName.Hosted).toMatchObject({
      spaceId: host.spaceId,
      role: 'participant',
      participantId: idOf(joined),
      state: 'open',
      ttlRemaining: 60,
    });

    // Past its TTL a space shows as closed.
    clock.advance(61_000);
    try {
      const later = await session.spaces();
      const hosted = later.spaces.find((s) => s.spaceId === host.spaceId);
      expect(hosted).toMatchObject({ state: 'closed', ttlRemaining: 0 });
    } finally {
      clock.advance(-61_000);
    }
    const empty = await sdk
      .hub()
      .session((await signup(h)).jwt)
      .spaces();
    expect(empty).toEqual({ spaces: [] });
  });
});
