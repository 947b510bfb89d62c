import { FakeClock } from '@convene/core';
import { describe, expect, it } from 'vitest';
import { expectError, expectOk, participantRow, useServer } from './helpers';
import { linkAgent, mintToken, signup } from './helpers/accounts';

/** `usr_` tokens expire (USER_TOKEN_TTL_S, default 90 days): a forgotten token stops working. */
const clock = new FakeClock('2030-01-01T00:00:00.000Z');
const DAY_MS = 86_400_000;
const { srv, h } = useServer({ clock, config: { userTokenTtlSeconds: 30 * 86_400, rateLimitMax: 100_000 } });

describe('a user token', () => {
  it('says when it expires, and works until then', async () => {
    const human = await signup(h);
    const minted = await mintToken(h, human, 'expiring');
    const expiresAt = new Date(clock.now().getTime() + 30 * DAY_MS).toISOString();
    expect(minted.expiresAt).toBe(expiresAt);
    const listed = await h.get('/hub/me/tokens', { headers: human.auth });
    expect(listed.body).toEqual([expect.objectContaining({ id: minted.id, expiresAt, revoked: false })]);

    clock.advance(30 * DAY_MS - 1_000);
    const space = await h.createSpace({}, { 'X-User-Token': minted.token });
    expectOk(await h.get(`/hub/space/${space.spaceId}/key`, { headers: { 'X-User-Token': minted.token } }));
  });

  it('stops working once expired: ignored where optional, 401 where required', async () => {
    const human = await signup(h);
    const minted = await mintToken(h, human);
    const space = await h.createSpace({}, { 'X-User-Token': minted.token });
    clock.advance(30 * DAY_MS);
    expectError(
      await h.get(`/hub/space/${space.spaceId}/key`, { headers: { 'X-User-Token': minted.token } }),
      401,
    );
    // createSpace and joinSpace ignore an invalid token: the new space is linked to nobody.
    const later = await h.createSpace({}, { 'X-User-Token': minted.token });
    const owner = await participantRow(srv, later.spaceId, later.ownerId);
    expect(owner?.userId).toBeNull();
    const mine = await h.get('/hub/me/spaces', { headers: (await signupAgain(human)).auth });
    expect(mine.body.spaces.map((s: { spaceId: string }) => s.spaceId)).toEqual([space.spaceId]);
  });

  it('minted by the link flow expires the same way', async () => {
    const human = await signup(h);
    const token = await linkAgent(h, human, 'Linked');
    const space = await h.createSpace({}, { 'X-User-Token': token });
    expectOk(await h.get(`/hub/space/${space.spaceId}/key`, { headers: { 'X-User-Token': token } }));
    clock.advance(30 * DAY_MS);
    const expired = await h.get(`/hub/space/${space.spaceId}/key`, { headers: { 'X-User-Token': token } });
    expectError(expired, 401);
    // Said as what it is, not as a missing credential.
    expect(expired.body.error).toMatch(
      /^the credential sent is not valid \(a usr_ token revoked, expired or unknown/,
    );
    const none = await h.get(`/hub/space/${space.spaceId}/key`);
    expectError(none, 401);
    expect(none.body.error).toBe(
      'send the dashboard JWT (Authorization: Bearer) or a usr_ token in X-User-Token',
    );
  });
});

/** A fresh dashboard session for a human whose earlier one may have expired with the clock. */
async function signupAgain(human: { email: string; password: string }) {
  const login = await h.post('/hub/auth/login', { body: { email: human.email, password: human.password } });
  expectOk(login);
  return { auth: { Authorization: `Bearer ${login.body.token}` } };
}
