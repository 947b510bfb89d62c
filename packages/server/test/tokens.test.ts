import { FakeClock } from '@convene/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectOk, onPostgres, useServer } from './helpers';
import { type HumanFixture, mintToken, signup } from './helpers/accounts';

const clock = new FakeClock('2030-01-01T00:00:00.000Z');
const { h } = useServer({ clock });
let human: HumanFixture;
beforeAll(async () => {
  human = await signup(h);
});

const spacesOf = async (who: HumanFixture): Promise<string[]> => {
  const res = await h.get('/hub/me/spaces', { headers: who.auth });
  expectOk(res);
  return res.body.spaces.map((s: { spaceId: string }) => s.spaceId);
};

describe('createApiToken', () => {
  it('answers 201 with the usr_ token, shown once, and its display prefix', async () => {
    const res = await h.post('/hub/me/tokens', { headers: human.auth, body: { name: 'CI runner' } });
    expectOk(res, 201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'CI runner',
      token: expect.stringMatching(/^usr_[A-Za-z0-9_-]{40,}$/),
      prefix: expect.any(String),
      expiresAt: new Date(clock.now().getTime() + 90 * 86_400_000).toISOString(),
    });
    expect(res.body.token.startsWith(res.body.prefix)).toBe(true);
    expect(res.body.prefix.length).toBeLessThan(res.body.token.length / 2);
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
    const me = await signup(h);
    const first = await mintToken(h, me, 'first');
    clock.advance(1000);
    const second = await mintToken(h, me, 'second');
    await mintToken(h, human, 'someone else’s');

    const res = await h.get('/hub/me/tokens', { headers: me.auth });
    expectOk(res);
    expect(res.body).toEqual([
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
    expect(res.text).not.toContain(first.token);
    expect(res.text).not.toContain(second.token);
    expect(res.text).not.toMatch(/hash/i);

    clock.advance(5000);
    await h.createSpace({}, { 'X-User-Token': first.token });
    const after = await h.get('/hub/me/tokens', { headers: me.auth });
    expect(after.body.find((t: { id: string }) => t.id === first.id).lastUsedAt).toBe(
      clock.now().toISOString(),
    );
    expect(after.body.find((t: { id: string }) => t.id === second.id)).not.toHaveProperty('lastUsedAt');
  });
});

describe('revokeApiToken', () => {
  it('answers 204 with no body, and the token stops working at once', async () => {
    const me = await signup(h);
    const token = await mintToken(h, me);
    const before = await h.createSpace({}, { 'X-User-Token': token.token });
    expectOk(await h.get(`/hub/space/${before.spaceId}/key`, { headers: { 'X-User-Token': token.token } }));

    const res = await h.delete(`/hub/me/tokens/${token.id}`, { headers: me.auth });
    expectOk(res, 204);
    expect(res.text).toBe('');

    const list = await h.get('/hub/me/tokens', { headers: me.auth });
    expect(list.body).toEqual([expect.objectContaining({ id: token.id, revoked: true })]);
    // Revoked: identity no longer proven, so key recovery refuses and createSpace links nothing.
    expectError(
      await h.get(`/hub/space/${before.spaceId}/key`, { headers: { 'X-User-Token': token.token } }),
      401,
    );
    const after = await h.createSpace({}, { 'X-User-Token': token.token });
    expect(await spacesOf(me)).toEqual([before.spaceId]);
    expect(await spacesOf(me)).not.toContain(after.spaceId);
    // Revoking again changes nothing and still succeeds.
    expectOk(await h.delete(`/hub/me/tokens/${token.id}`, { headers: me.auth }), 204);
  });

  it('answers 404 for an unknown id, a non-UUID, and another human’s token (which keeps working)', async () => {
    const theirs = await mintToken(h, human);
    const me = await signup(h);
    expectError(
      await h.delete('/hub/me/tokens/00000000-0000-4000-8000-000000000000', { headers: me.auth }),
      404,
    );
    expectError(await h.delete('/hub/me/tokens/not-a-uuid', { headers: me.auth }), 404);
    expectError(await h.delete(`/hub/me/tokens/${theirs.id}`, { headers: me.auth }), 404);
    const space = await h.createSpace({}, { 'X-User-Token': theirs.token });
    expect(await spacesOf(human)).toContain(space.spaceId);
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
    const list = await h.get('/hub/me/tokens', { headers: human.auth });
    expect(list.body.find((t: { id: string }) => t.id === token.id).revoked).toBe(false);
  });
});

describe.runIf(onPostgres())('two nodes on one database', () => {
  // No SECRET configured: both nodes take the one generated into the shared database. Both
  // serve one PUBLIC_URL (the JWT issuer), as nodes behind one address do.
  const { srv: a, h: ha } = useServer({ config: { secret: undefined } });
  const { h: hb } = useServer(() => ({
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
    const token = await mintToken(ha, me);
    const space = await hb.createSpace({}, { 'X-User-Token': token.token });
    const key = await hb.get(`/hub/space/${space.spaceId}/key`, { headers: { 'X-User-Token': token.token } });
    expectOk(key);
    expect(key.body.privateKey).toBe(space.ownerKey);

    expectOk(await ha.delete(`/hub/me/tokens/${token.id}`, { headers: me.auth }), 204);
    expectError(
      await hb.get(`/hub/space/${space.spaceId}/key`, { headers: { 'X-User-Token': token.token } }),
      401,
    );
    const later = await hb.createSpace({}, { 'X-User-Token': token.token });
    const mine = await hb.get('/hub/me/spaces', { headers: me.auth });
    expect(mine.body.spaces.map((s: { spaceId: string }) => s.spaceId)).toEqual([space.spaceId]);
    expect(later.spaceId).not.toBe(space.spaceId);
  });
});
