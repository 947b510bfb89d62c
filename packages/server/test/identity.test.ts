import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/env';
import { expectError, expectOk, type StartOptions, useServer, withServer } from './helpers';
import { bearer, type HumanFixture, linkAgent, mintToken, signup, startLink } from './helpers/accounts';

describe('getMySpaceKey (key recovery)', () => {
  const { h } = useServer();
  let human: HumanFixture;
  let token: string;
  beforeAll(async () => {
    human = await signup(h);
    token = (await mintToken(h, human)).token;
  });

  const keyOf = (spaceId: string, headers: Record<string, string>) =>
    h.get(`/hub/space/${spaceId}/key`, { headers });

  it('returns the owner key of a space created with X-User-Token, with the JWT and with the token', async () => {
    const space = await h.createSpace({}, { 'X-User-Token': token });
    for (const headers of [human.auth, { 'X-User-Token': token }]) {
      const res = await keyOf(space.spaceId, headers);
      expectOk(res);
      expect(res.body).toEqual({ role: 'owner', privateKey: space.ownerKey });
    }
    // The recovered key is the real one: it works as the owner key.
    const { body } = await keyOf(space.spaceId, human.auth);
    expectOk(await h.post(`/hub/space/${space.spaceId}/invite`, { key: body.privateKey }));
  });

  it('returns the participant key of a join made with X-User-Token, with the JWT and with the token', async () => {
    const host = await h.createSpace();
    const joined = await h.joinActive(
      host,
      { name: 'Linked human', isHuman: true },
      { headers: { 'X-User-Token': token } },
    );
    for (const headers of [human.auth, { 'X-User-Token': token }]) {
      const res = await keyOf(host.spaceId, headers);
      expectOk(res);
      expect(res.body).toEqual({ role: 'participant', privateKey: joined.key });
    }
  });

  it('recovers a private-space participant key once approved (and still after the join-status poll)', async () => {
    const host = await h.createSpace({ privacy: 'private' });
    const pending = await h.joinPending(host, {}, { headers: { 'X-User-Token': token } });
    expectError(await keyOf(host.spaceId, human.auth), 404);
    expectOk(
      await h.post(`/hub/space/${host.spaceId}/participants/${pending.participantId}/approve`, {
        key: host.ownerKey,
      }),
    );
    const poll = await h.get(`/hub/space/${host.spaceId}/join/${pending.participantId}`, {
      key: pending.invitationKey,
      headers: { 'X-Poll-Token': pending.pollToken },
    });
    expectOk(poll);
    const res = await keyOf(host.spaceId, human.auth);
    expectOk(res);
    expect(res.body).toEqual({ role: 'participant', privateKey: poll.body.participantPrivateKey });
  });

  it('works with a token obtained through the link flow', async () => {
    const linked = await linkAgent(h, human, 'Recovering agent');
    const space = await h.createSpace({}, { 'X-User-Token': linked });
    expect((await keyOf(space.spaceId, { 'X-User-Token': linked })).body.privateKey).toBe(space.ownerKey);
    expect((await keyOf(space.spaceId, human.auth)).body.privateKey).toBe(space.ownerKey);
  });

  it('answers 404 where the human holds no key', async () => {
    const other = await signup(h);
    const otherToken = (await mintToken(h, other)).token;
    const anonymous = await h.createSpace();
    const theirs = await h.createSpace({}, { 'X-User-Token': otherToken });
    expectError(await keyOf(anonymous.spaceId, human.auth), 404);
    expectError(await keyOf(theirs.spaceId, human.auth), 404);
    expectError(await keyOf(theirs.spaceId, { 'X-User-Token': token }), 404);
    expectError(await keyOf('00000000-0000-4000-8000-000000000000', human.auth), 404);
    expectError(await keyOf('not-a-uuid', human.auth), 404);
    // A space joined anonymously, even by the same human, holds no recoverable key.
    await h.joinActive(anonymous, { name: 'unlinked' });
    expectError(await keyOf(anonymous.spaceId, human.auth), 404);
  });

  it('answers 404 once the key is dead: kicked, left, closed', async () => {
    const host = await h.createSpace();
    const kicked = await h.joinActive(host, {}, { headers: { 'X-User-Token': token } });
    expectOk(
      await h.post(`/hub/space/${host.spaceId}/participants/${kicked.participantId}/kick`, {
        key: host.ownerKey,
      }),
    );
    expectError(await keyOf(host.spaceId, human.auth), 404);

    const left = await h.createSpace();
    const leaver = await h.joinActive(left, {}, { headers: { 'X-User-Token': token } });
    expectOk(await h.post(`/hub/space/${left.spaceId}/leave`, { key: leaver.key }));
    expectError(await keyOf(left.spaceId, human.auth), 404);

    const closed = await h.createSpace({}, { 'X-User-Token': token });
    expectOk(await h.delete(`/hub/space/${closed.spaceId}`, { key: closed.ownerKey }));
    expectError(await keyOf(closed.spaceId, human.auth), 404);
  });

  it('answers 401 with WWW-Authenticate without a valid identity', async () => {
    const space = await h.createSpace({}, { 'X-User-Token': token });
    expectError(await keyOf(space.spaceId, {}), 401);
    expectError(await keyOf(space.spaceId, { 'X-User-Token': 'usr_unknown' }), 401);
    expectError(await keyOf(space.spaceId, bearer('not-a-jwt')), 401);
    // The space key itself is not an identity here.
    expectError(await h.get(`/hub/space/${space.spaceId}/key`, { key: space.ownerKey }), 401);
    // A usr_ token goes in X-User-Token; as a bearer it is not the dashboard JWT.
    expectError(await keyOf(space.spaceId, bearer(token)), 401);
    expectError(await keyOf('not-a-uuid', {}), 401);
  });
});

describe('an external OpenID Connect issuer', () => {
  let jwksServer: Server;
  let issuer: string;
  let signingKey: CryptoKey;
  let jwksFetches = 0;

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256');
    signingKey = pair.privateKey;
    const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'idp-key-1', alg: 'ES256', use: 'sig' };
    jwksServer = createHttpServer((req, res) => {
      if (req.url === '/jwks') {
        jwksFetches++;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => jwksServer?.close(resolve));
  });
  const { h } = useServer(() => ({
    config: { oidc: { issuer, jwksUrl: `${issuer}/jwks`, audience: 'convene-dashboard' } },
  }));

  const idToken = (
    claims: Record<string, unknown>,
    options: { iss?: string; aud?: string; key?: CryptoKey; typ?: string; exp?: string } = {},
  ) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'idp-key-1', typ: options.typ ?? 'JWT' })
      .setIssuer(options.iss ?? issuer)
      .setAudience(options.aud ?? 'convene-dashboard')
      .setIssuedAt()
      .setExpirationTime(options.exp ?? '1h')
      .sign(options.key ?? signingKey);

  it('finds or creates the human by sub, who then uses the dashboard like any other', async () => {
    const jwt = await idToken({
      sub: 'idp|alice',
      email: 'Alice@Corp.example',
      email_verified: true,
      name: 'Alice',
    });
    const first = await h.get('/hub/me', { headers: bearer(jwt) });
    expectOk(first);
    expect(first.body).toMatchObject({ email: 'alice@corp.example', name: 'Alice' });
    // A later token for the same subject (even with another email) is the same human.
    const again = await h.get('/hub/me', {
      headers: bearer(
        await idToken({ sub: 'idp|alice', email: 'alice@elsewhere.example', email_verified: true }),
      ),
    });
    expect(again.body.id).toBe(first.body.id);

    const minted = await h.post('/hub/me/tokens', { headers: bearer(jwt), body: { name: 'from SSO' } });
    expectOk(minted, 201);
    const space = await h.createSpace({}, { 'X-User-Token': minted.body.token });
    expect((await h.get(`/hub/space/${space.spaceId}/key`, { headers: bearer(jwt) })).body.privateKey).toBe(
      space.ownerKey,
    );
    const link = await startLink(h, 'SSO agent');
    expectOk(
      await h.post('/hub/me/link/approve', { headers: bearer(jwt), body: { userCode: link.userCode } }),
    );
    expect(jwksFetches).toBeGreaterThan(0);
  });

  it('links a built-in account with the same email on first sight', async () => {
    const local = await signup(h, { email: 'bob@corp.example' });
    const res = await h.get('/hub/me', {
      headers: bearer(await idToken({ sub: 'idp|bob', email: 'bob@corp.example', email_verified: true })),
    });
    expectOk(res);
    expect(res.body.id).toBe(local.id);
  });

  it('does not link by an email the issuer marks unverified, or does not say it verified', async () => {
    const local = await signup(h, { email: 'carol@corp.example' });
    for (const [sub, verified] of [
      ['idp|mallory', { email_verified: false }],
      ['idp|trudy', {}],
      ['idp|eve', { email_verified: 'true' }],
    ] as const) {
      const res = await h.get('/hub/me', {
        headers: bearer(await idToken({ sub, email: 'carol@corp.example', ...verified })),
      });
      expectOk(res);
      expect(res.body.id).not.toBe(local.id);
      expect(res.body.email).not.toBe('carol@corp.example');
    }
  });

  it('refuses tokens with another issuer, audience or key, expired ones, ID-JAG assertions and no sub', async () => {
    const other = await generateKeyPair('ES256');
    const refused = [
      await idToken({ sub: 'x' }, { iss: 'http://127.0.0.1:1' }),
      await idToken({ sub: 'x' }, { aud: 'someone-else' }),
      // No audience at all: a token minted for no one in particular is not for this service.
      await new SignJWT({ sub: 'x' })
        .setProtectedHeader({ alg: 'ES256', kid: 'idp-key-1', typ: 'JWT' })
        .setIssuer(issuer)
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(signingKey),
      await idToken({ sub: 'x' }, { key: other.privateKey }),
      await idToken({ sub: 'x' }, { exp: '-1m' }),
      await idToken({ sub: 'x' }, { typ: 'oauth-id-jag+jwt' }),
      await idToken({ email: 'nosub@corp.example' }),
    ];
    for (const jwt of refused) expectError(await h.get('/hub/me', { headers: bearer(jwt) }), 401);
  });

  it('cannot be configured without an audience', () => {
    const env = { OIDC_ISSUER: issuer, OIDC_JWKS_URL: `${issuer}/jwks` };
    expect(() => loadConfig(env)).toThrow(/OIDC_AUDIENCE/);
    expect(loadConfig({ ...env, OIDC_AUDIENCE: 'convene-dashboard' }).oidc).toEqual({
      issuer,
      jwksUrl: `${issuer}/jwks`,
      audience: 'convene-dashboard',
    });
  });

  it('still accepts the built-in accounts beside it', async () => {
    const local = await signup(h);
    expectOk(await h.get('/hub/me', { headers: local.auth }));
  });
});

describe('logs', () => {
  it('never carry a password, token, device code, JWT or key through the whole flow', async () => {
    const lines: string[] = [];
    const secrets: string[] = [];
    const logged: StartOptions = {
      config: { logLevel: 'trace' },
      logStream: { write: (line) => void lines.push(line) },
    };
    await withServer(logged, async ({ h }) => {
      const password = 'log-test-password-1234';
      const human = await signup(h, { email: 'logs@example.com', password });
      secrets.push(password, human.jwt);
      const login = await h.post('/hub/auth/login', { body: { email: 'logs@example.com', password } });
      secrets.push(login.body.token);
      await h.post('/hub/auth/login', {
        body: { email: 'logs@example.com', password: 'wrong-password-secret' },
      });
      secrets.push('wrong-password-secret');

      const minted = await mintToken(h, human, 'log token');
      secrets.push(minted.token);
      await h.get('/hub/me/tokens', { headers: human.auth });

      const link = await h.post('/hub/link/start', { body: { agentName: 'Logger' } });
      secrets.push(link.body.deviceCode);
      await h.post('/hub/link/poll', { body: { deviceCode: link.body.deviceCode } });
      await h.get(`/hub/me/link/${link.body.userCode}`, { headers: human.auth });
      await h.post('/hub/me/link/approve', { headers: human.auth, body: { userCode: link.body.userCode } });
      const poll = await h.post('/hub/link/poll', { body: { deviceCode: link.body.deviceCode } });
      secrets.push(poll.body.token);
      await h.post('/hub/link/poll', { body: { deviceCode: link.body.deviceCode } });

      const space = await h.createSpace({}, { 'X-User-Token': poll.body.token });
      secrets.push(space.ownerKey);
      const invitationKey = await h.invite(space);
      secrets.push(invitationKey);
      const joined = await h.post(`/hub/space/${space.spaceId}/join`, {
        key: invitationKey,
        headers: { 'X-User-Token': minted.token },
        body: { name: 'Joiner', role: 'x', isHuman: true },
      });
      secrets.push(joined.body.participantPrivateKey);
      await h.get(`/hub/space/${space.spaceId}/key`, { headers: human.auth });
      await h.get(`/hub/space/${space.spaceId}/key`, { headers: { 'X-User-Token': minted.token } });
      await h.get(`/hub/space/${space.spaceId}?key=${space.ownerKey}`);
      await h.get('/hub/me', { headers: bearer(minted.token) });
      await h.delete(`/hub/me/tokens/${minted.id}`, { headers: human.auth });
      await h.get(`/hub/space/${space.spaceId}/key`, { headers: { 'X-User-Token': minted.token } });
    });
    const log = lines.join('');
    // The log did record the flow, so the assertions below have something to look at.
    expect(log).toContain('/hub/link/poll');
    expect(log).toContain('/hub/auth/login');
    expect(secrets.every((s) => typeof s === 'string' && s.length >= 8)).toBe(true);
    for (const secret of secrets) expect(log, 'a secret reached the log').not.toContain(secret);
  });
});
