import { FakeClock } from '@convene/core';
import { AuthenticationError, NotFoundError, type Session } from '@convene/sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectAnswer, expectError, expectOk, onPostgres, sdkError, useServer } from './helpers';
import { type HumanFixture, mintToken, signup } from './helpers/accounts';

// API tokens as the human's SDK session mints, lists and revokes them, and as agents use them
// (X-User-Token through the SDK's userToken); the exact 201/204 wire shapes, bad bodies and
// credentials over raw HTTP.
const clock = new FakeClock('2030-01-01T00:00:00.000Z');
const { h, sdk } = useServer({ clock });
let human: HumanFixture;
let session: Session;
beforeAll(async () => {
  human = await signup(h);
  session = sdk.hub().session(human.jwt);
});

const spacesOf = async (who: Session): Promise<string[]> => {
  const res = await who.spaces().withResponse();
  expectAnswer(res);
  return res.data.spaces.map((s) => s.spaceId);
};

describe('createApiToken', () => {
  it('answers 201 with the usr_ token, shown once, and its display prefix', async () => {
    const res = await session.tokens.create({ name: 'CI runner' }).withResponse();
    expectAnswer(res, 201);
    expect(res.data).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'CI runner',
      token: expect.stringMatching(/^usr_[A-Za-z0-9_-]{40,}$/),
      prefix: expect.any(String),
      expiresAt: new Date(clock.now().getTime() + 90 * 86_400_000).toISOString(),
    });
    expect(res.data.token.startsWith(res.data.prefix)).toBe(true);
    expect(res.data.prefix.length).toBeLessThan(res.data.token.length / 2);
  });

  it('takes no body at all, and names the token by default', async () => {
    const res = await h.post('/hub/me/tokens', { headers: human.auth });
    expectOk(res, 201);
    expect(res.body.name).toBe('API token');
  });

  it.each([[{ name: '' }], [{ name: 'x'.repeat(201) }], [{ name: 7 }]])(
    'rejects %j with 400',
    async (body) => {
      expectError(await h.post('/hub/me/tokens', { headers: human.auth, body }), 400);
    },
  );
});

describe('listApiTokens', () => {
  it('lists metadata, newest first, never a secret; lastUsedAt follows use', async () => {
    const me = sdk.hub().session((await signup(h)).jwt);
    const first = await me.tokens.create({ name: 'first' });
    clock.advance(1000);
    const second = await me.tokens.create({ name: 'second' });
    await session.tokens.create({ name: 'someone else’s' });

    const res = await me.tokens.list().withResponse();
    expectAnswer(res);
    expect(res.data).toEqual([
      {
        id: second.id,
        name: 'second',
        prefix: second.prefix,
        createdAt: clock.now().toISOString(),
        revoked: false,
        expiresAt: new Date(clock.now().getTime() + 90 * 86_400_000).toISOString(),
      },
      {
        id: first.id,
        name: 'first',
        prefix: first.prefix,
        createdAt: new Date(clock.now().getTime() - 1000).toISOString(),
        revoked: false,
        expiresAt: new Date(clock.now().getTime() - 1000 + 90 * 86_400_000).toISOString(),
      },
    ]);
    const text = JSON.stringify(res.data);
    expect(text).not.toContain(first.token);
    expect(text).not.toContain(second.token);
    expect(text).not.toMatch(/hash/i);

    clock.advance(5000);
    await sdk.createSpace({}, sdk.hub({ userToken: first.token }));
    const after = await me.tokens.list();
    expect(after.find((t) => t.id === first.id)?.lastUsedAt).toBe(clock.now().toISOString());
    expect(after.find((t) => t.id === second.id)).not.toHaveProperty('lastUsedAt');
  });
});

describe('revokeApiToken', () => {
  it('answers 204 with no body, and the token stops working at once', async () => {
    const person = await signup(h);
    const me = sdk.hub().session(person.jwt);
    const token = await me.tokens.create();
    const agent = sdk.hub({ userToken: token.token });
    const before = await sdk.createSpace({}, agent);
    expectAnswer(await agent.spaces.recoverKey(before.spaceId).withResponse());

    // The exact answer over the wire: 204 and nothing else.
    const res = await h.delete(`/hub/me/tokens/${token.id}`, { headers: person.auth });
    expectOk(res, 204);
    expect(res.text).toBe('');
    // No content, so no content type either (RFC 9110 8.3: it describes a content).
    expect(res.headers.get('content-type')).toBeNull();

    expect(await me.tokens.list()).toEqual([expect.objectContaining({ id: token.id, revoked: true })]);
    // Revoked: identity no longer proven, so key recovery refuses and createSpace links nothing.
    await sdkError(agent.spaces.recoverKey(before.spaceId), AuthenticationError);
    const after = await sdk.createSpace({}, agent);
    expect(await spacesOf(me)).toEqual([before.spaceId]);
    expect(await spacesOf(me)).not.toContain(after.spaceId);
    // Revoking again changes nothing and still succeeds.
    const again = await me.tokens.revoke(token.id).withResponse();
    expectAnswer(again, 204);
    expect(again.data).toBeUndefined();
  });

  it('answers 404 for an unknown id, a non-UUID, and another human’s token (which keeps working)', async () => {
    const theirs = await session.tokens.create();
    const me = sdk.hub().session((await signup(h)).jwt);
    await sdkError(me.tokens.revoke('00000000-0000-4000-8000-000000000000'), NotFoundError);
    await sdkError(me.tokens.revoke('not-a-uuid'), NotFoundError);
    await sdkError(me.tokens.revoke(theirs.id), NotFoundError);
    const space = await sdk.createSpace({}, sdk.hub({ userToken: theirs.token }));
    expect(await spacesOf(session)).toContain(space.spaceId);
  });

  it('cannot be done with the token itself', async () => {
    const token = await mintToken(h, human);
    expectError(
      await h.delete(`/hub/me/tokens/${token.id}`, { headers: { 'X-User-Token': token.token } }),
      401,
    );
    expectError(
      await h.delete(`/hub/me/tokens/${token.id}`, { headers: { Authorization: `Bearer ${token.token}` } }),
      401,
    );
    const list = await session.tokens.list();
    expect(list.find((t) => t.id === token.id)?.revoked).toBe(false);
  });
});

describe.runIf(onPostgres())('two nodes on one database', () => {
  // No SECRET configured: both nodes take the one generated into the shared database. Both
  // serve one PUBLIC_URL (the JWT issuer), as nodes behind one address do.
  const { srv: a, h: ha, sdk: sdkA } = useServer({ config: { secret: undefined } });
  const { h: hb, sdk: sdkB } = useServer(() => ({
    config: { secret: undefined, publicUrl: a.url },
    databaseUrl: a.databaseUrl as string,
  }));

  it('a dashboard JWT from one node is accepted by the other, with the same JWKS', async () => {
    const me = await signup(ha);
    const res = await hb.get('/hub/me', { headers: me.auth });
    expectOk(res);
    expect(res.body.id).toBe(me.id);
    expect((await hb.get('/.well-known/jwks.json')).body).toEqual(
      (await ha.get('/.well-known/jwks.json')).body,
    );
  });

  it('a revocation on one node is observed by the other at once', async () => {
    const me = await signup(ha);
    const onA = sdkA.hub().session(me.jwt);
    const token = await onA.tokens.create();
    const agentOnB = sdkB.hub({ userToken: token.token });
    const space = await sdkB.createSpace({}, agentOnB);
    const key = await agentOnB.spaces.recoverKey(space.spaceId).withResponse();
    expectAnswer(key);
    expect(key.data.privateKey).toBe(space.ownerKey);

    expectAnswer(await onA.tokens.revoke(token.id).withResponse(), 204);
    await sdkError(agentOnB.spaces.recoverKey(space.spaceId), AuthenticationError);
    const later = await sdkB.createSpace({}, agentOnB);
    const mine = await sdkB.hub().session(me.jwt).spaces();
    expect(mine.spaces.map((s) => s.spaceId)).toEqual([space.spaceId]);
    expect(later.spaceId).not.toBe(space.spaceId);
  });
});
