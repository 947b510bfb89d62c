import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Convene, NotFoundError, type Session } from '@convene/sdk';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/env';
import {
  expectAnswer,
  expectError,
  expectOk,
  idOf,
  type StartOptions,
  sdkError,
  useServer,
  withServer,
} from './helpers';
import { bearer, type HumanFixture, linkAgent, mintToken, signup, startLink } from './helpers/accounts';

describe('getMySpaceKey (key recovery)', () => {
  // Recovery as the human's dashboard session (session.spaceKey) and as an agent holding the
  // human's token (spaces.recoverKey) do it through the SDK; missing and wrong identities raw.
  const { h, sdk } = useServer();
  let human: HumanFixture;
  let token: string;
  /** The human's two identities: the dashboard session and an agent holding one of its tokens. */
  let session: Session;
  let agent: Convene;
  beforeAll(async () => {
    human = await signup(h);
    token = (await mintToken(h, human)).token;
    session = sdk.hub().session(human.jwt);
    agent = sdk.hub({ userToken: token });
  });

  const keyOf = (spaceId: string, headers: Record<string, string>) =>
    h.get(`/hub/space/${spaceId}/key`, { headers });
  const recoveries = (spaceId: string) => [
    () => session.spaceKey(spaceId),
    () => agent.spaces.recoverKey(spaceId),
  ];

  it('returns the owner key of a space created with X-User-Token, with the JWT and with the token', async () => {
    const space = await sdk.createSpace({}, agent);
    for (const recover of recoveries(space.spaceId)) {
      const res = await recover().withResponse();
      expectAnswer(res);
      expect(res.data).toEqual({ role: 'owner', privateKey: space.ownerKey });
    }
    // The recovered key is the real one: it works as the owner key.
    const { privateKey } = await session.spaceKey(space.spaceId);
    expectAnswer(await sdk.space(space.spaceId, privateKey).invitations.create().withResponse());
  });

  it('returns the participant key of a join made with X-User-Token, with the JWT and with the token', async () => {
    const host = await sdk.createSpace();
    const joined = await sdk.joinActive(host.owner, { name: 'Linked human', isHuman: true }, agent);
    for (const recover of recoveries(host.spaceId)) {
      const res = await recover().withResponse();
      expectAnswer(res);
      expect(res.data).toEqual({ role: 'participant', privateKey: joined.key });
    }
  });

  it('recovers a private-space participant key once approved (and still after the join-status poll)', async () => {
    const host = await sdk.createSpace({ privacy: 'private' });
    const pending = await sdk.joinPending(host.owner, {}, agent);
    await sdkError(session.spaceKey(host.spaceId), NotFoundError);
    expectAnswer(await host.owner.participants.approve(pending.participantId).withResponse());
    const poll = await pending.check().withResponse();
    expectAnswer(poll);
    const res = await session.spaceKey(host.spaceId).withResponse();
    expectAnswer(res);
    expect(res.data).toEqual({ role: 'participant', privateKey: poll.data?.key });
  });

  it('works with a token obtained through the link flow', async () => {
    const linked = sdk.hub({ userToken: await linkAgent(h, human, 'Recovering agent') });
    const space = await sdk.createSpace({}, linked);
    expect((await linked.spaces.recoverKey(space.spaceId)).privateKey).toBe(space.ownerKey);
    expect((await session.spaceKey(space.spaceId)).privateKey).toBe(space.ownerKey);
  });

  it('answers 404 where the human holds no key', async () => {
    const other = await signup(h);
    const otherAgent = sdk.hub({ userToken: (await mintToken(h, other)).token });
    const anonymous = await sdk.createSpace();
    const theirs = await sdk.createSpace({}, otherAgent);
    await sdkError(session.spaceKey(anonymous.spaceId), NotFoundError);
    await sdkError(session.spaceKey(theirs.spaceId), NotFoundError);
    await sdkError(agent.spaces.recoverKey(theirs.spaceId), NotFoundError);
    await sdkError(session.spaceKey('00000000-0000-4000-8000-000000000000'), NotFoundError);
    await sdkError(session.spaceKey('not-a-uuid'), NotFoundError);
    // A space joined anonymously, even by the same human, holds no recoverable key.
    await sdk.joinActive(anonymous.owner, { name: 'unlinked' });
    await sdkError(session.spaceKey(anonymous.spaceId), NotFoundError);
  });

  it('answers 404 once the key is dead, saying why to its human: kicked, left, closed', async () => {
    // The message says why; the code, where one names it, says it for code to branch on.
    const why = async (spaceId: string, code = 'not_found') => {
      const error = await sdkError(session.spaceKey(spaceId), NotFoundError);
      expect(error.code).toBe(code);
      return error.body?.error;
    };
    const host = await sdk.createSpace();
    const kicked = await sdk.joinActive(host.owner, {}, agent);
    expectAnswer(await host.owner.participants.kick(idOf(kicked)).withResponse());
    expect(await why(host.spaceId, 'participant_removed')).toBe(
      'key for this space not found: you were removed from this space',
    );

    const left = await sdk.createSpace();
    const leaver = await sdk.joinActive(left.owner, {}, agent);
    expectAnswer(await leaver.leave().withResponse());
    expect(await why(left.spaceId, 'participant_left')).toBe(
      'key for this space not found: you left this space',
    );

    const closed = await sdk.createSpace({}, agent);
    expectAnswer(await closed.owner.close().withResponse());
    expect(await why(closed.spaceId, 'space_closed')).toBe(
      'key for this space not found: the space is closed, and its keys no longer work',
    );
    const guarded = await sdk.createSpace({ privacy: 'private' });
    await sdk.joinPending(guarded.owner, {}, agent);
    expect(await why(guarded.spaceId)).toBe(
      "key for this space not found: your join waits for the owner's approval: its key comes with the join-status poll",
    );

    const expiring = await sdk.createSpace({ ttl: 1 }, agent);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await why(expiring.spaceId, 'space_expired')).toBe(
      'key for this space not found: the space has expired, and its keys no longer work',
    );
    // To a human who held no key there, a closed space is any space without one of theirs.
    const stranger = sdk.hub({ userToken: (await mintToken(h, await signup(h))).token });
    const answer = await sdkError(stranger.spaces.recoverKey(closed.spaceId), NotFoundError);
    expect([answer.code, answer.body?.error]).toEqual(['not_found', 'key for this space not found']);
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
