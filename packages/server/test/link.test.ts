import { FakeClock } from '@convene/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectOk, onPostgres, useServer, withServer } from './helpers';
import { type HumanFixture, linkAgent, signup, startLink } from './helpers/accounts';

const clock = new FakeClock('2030-01-01T00:00:00.000Z');
const TTL = 600;
const { srv, h } = useServer({ clock, config: { linkTtlSeconds: TTL } });
let human: HumanFixture;
beforeAll(async () => {
  human = await signup(h);
});

const poll = (deviceCode: unknown) => h.post('/hub/link/poll', { body: { deviceCode } });
const approve = (userCode: string, who: HumanFixture = human) =>
  h.post('/hub/me/link/approve', { headers: who.auth, body: { userCode } });
const deny = (userCode: string, who: HumanFixture = human) =>
  h.post('/hub/me/link/deny', { headers: who.auth, body: { userCode } });

describe('startLink', () => {
  it('answers the device code, the verification URIs, the lifetime and the poll interval', async () => {
    const res = await h.post('/hub/link/start', { body: { agentName: 'Claude' } });
    expectOk(res);
    expect(res.body).toEqual({
      deviceCode: expect.any(String),
      verificationUri: `${srv.url}/link`,
      verificationUriComplete: expect.stringMatching(
        new RegExp(`^${srv.url}/link\\?code=[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$`),
      ),
      expiresIn: TTL,
      interval: 5,
      userCode: expect.stringMatching(/^[A-Z]{4}-[A-Z]{4}$/),
    });
    expect(res.body.verificationUriComplete).toBe(`${srv.url}/link?code=${res.body.userCode}`);
    // The device code is a long secret and never part of a URL.
    expect(res.body.deviceCode.length).toBeGreaterThanOrEqual(40);
    expect(res.body.verificationUriComplete).not.toContain(res.body.deviceCode);
  });

  it('works without a body and without an agent name', async () => {
    expectOk(await h.post('/hub/link/start'));
    expectOk(await h.post('/hub/link/start', { body: {} }));
  });

  it('mints a fresh request each time', async () => {
    const a = await startLink(h);
    const b = await startLink(h);
    expect(a.deviceCode).not.toBe(b.deviceCode);
    expect(a.userCode).not.toBe(b.userCode);
  });

  it.each([[{ agentName: '' }], [{ agentName: 'x'.repeat(201) }], [{ agentName: 42 }]])(
    'rejects %j with 400',
    async (body) => {
      expectError(await h.post('/hub/link/start', { body }), 400);
    },
  );
});

describe('the link flow', () => {
  it('pending until approved, then the token exactly once, then 410', async () => {
    const link = await startLink(h, 'Build bot');
    for (let i = 0; i < 3; i++) {
      // Polling faster than the interval is answered normally.
      const pending = await poll(link.deviceCode);
      expectOk(pending);
      expect(pending.body).toEqual({ status: 'pending' });
    }

    const view = await h.get(`/hub/me/link/${link.userCode}`, { headers: human.auth });
    expectOk(view);
    expect(view.body).toEqual({
      agentName: 'Build bot',
      status: 'pending',
      expiresAt: new Date(clock.now().getTime() + TTL * 1000).toISOString(),
    });

    const ok = await approve(link.userCode);
    expectOk(ok);
    expect(ok.body).toEqual({ ok: true });

    const approved = await poll(link.deviceCode);
    expectOk(approved);
    expect(approved.body).toEqual({
      status: 'approved',
      token: expect.stringMatching(/^usr_[A-Za-z0-9_-]{40,}$/),
      prefix: approved.body.token.slice(0, approved.body.prefix.length),
    });
    expect(approved.body.prefix.length).toBeGreaterThanOrEqual(6);

    // Consumed: the token is never handed out again.
    const again = await poll(link.deviceCode);
    expectError(again, 410);
    expect(again.text).not.toContain(approved.body.token);
    expect((await h.get(`/hub/me/link/${link.userCode}`, { headers: human.auth })).body.status).toBe(
      'consumed',
    );

    // The token belongs to the approving human, named after the agent, and works as X-User-Token.
    const tokens = await h.get('/hub/me/tokens', { headers: human.auth });
    const minted = tokens.body.find((t: { prefix: string }) => t.prefix === approved.body.prefix);
    expect(minted).toMatchObject({ name: 'Build bot', revoked: false });
    const space = await h.createSpace({ name: 'Linked' }, { 'X-User-Token': approved.body.token });
    const mine = await h.get('/hub/me/spaces', { headers: human.auth });
    expect(mine.body.spaces.map((s: { spaceId: string }) => s.spaceId)).toContain(space.spaceId);
  });

  it('accepts the user code without the dash and in any case', async () => {
    const link = await startLink(h);
    const typed = link.userCode.replace('-', '').toLowerCase();
    expectOk(await h.get(`/hub/me/link/${typed}`, { headers: human.auth }));
    expectOk(await approve(` ${typed.slice(0, 4)} ${typed.slice(4)} `));
    expect((await poll(link.deviceCode)).body.status).toBe('approved');
  });

  it('names a token from an anonymous agent generically', async () => {
    const link = await startLink(h);
    expect((await h.get(`/hub/me/link/${link.userCode}`, { headers: human.auth })).body.agentName).toBeNull();
    await approve(link.userCode);
    const { body } = await poll(link.deviceCode);
    const tokens = await h.get('/hub/me/tokens', { headers: human.auth });
    expect(tokens.body.find((t: { prefix: string }) => t.prefix === body.prefix).name).toBe('Linked agent');
  });

  it('refused: the poll answers denied, and keeps answering it; no token is minted', async () => {
    const other = await signup(h);
    const link = await startLink(h, 'Refused agent');
    const ok = await deny(link.userCode, other);
    expectOk(ok);
    expect(ok.body).toEqual({ ok: true });
    for (let i = 0; i < 2; i++) {
      const res = await poll(link.deviceCode);
      expectOk(res);
      expect(res.body).toEqual({ status: 'denied' });
    }
    expect((await h.get('/hub/me/tokens', { headers: other.auth })).body).toEqual([]);
    // Decided once: neither approve nor deny applies any more.
    expectError(await approve(link.userCode, other), 404);
    expectError(await deny(link.userCode, other), 404);
  });

  it('an approved request cannot be approved or refused again', async () => {
    const link = await startLink(h);
    expectOk(await approve(link.userCode));
    expectError(await approve(link.userCode), 404);
    expectError(await deny(link.userCode), 404);
    expect((await poll(link.deviceCode)).body.status).toBe('approved');
  });

  it('expires after LINK_TTL_S: the poll answers 410, and the code can no longer be decided', async () => {
    const pending = await startLink(h);
    const approvedLate = await startLink(h);
    const approvedInTime = await startLink(h, 'Late collector');
    const denied = await startLink(h);
    expectOk(await approve(approvedInTime.userCode));
    expectOk(await deny(denied.userCode));

    clock.advance((TTL - 1) * 1000);
    expect((await poll(pending.deviceCode)).body).toEqual({ status: 'pending' });
    clock.advance(1000);

    expectError(await poll(pending.deviceCode), 410);
    expectError(await approve(approvedLate.userCode), 404);
    expectError(await deny(approvedLate.userCode), 404);
    expectError(await poll(approvedLate.deviceCode), 410);
    // An approval nobody collected in time is not handed out late; its token is revoked.
    expectError(await poll(approvedInTime.deviceCode), 410);
    expectError(await poll(denied.deviceCode), 410);
    const view = await h.get(`/hub/me/link/${pending.userCode}`, { headers: human.auth });
    expectOk(view);
    expect(view.body.status).toBe('expired');
    const tokens = await h.get('/hub/me/tokens', { headers: human.auth });
    expect(tokens.body.find((t: { name: string }) => t.name === 'Late collector')).toMatchObject({
      revoked: true,
    });
  });

  it('hands the token to exactly one of many concurrent polls', async () => {
    const link = await startLink(h);
    await approve(link.userCode);
    const results = await Promise.all(Array.from({ length: 8 }, () => poll(link.deviceCode)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 410, 410, 410, 410, 410, 410, 410]);
    expect(results.find((r) => r.status === 200)?.body.token).toMatch(/^usr_/);
  });
});

describe('pollLink errors', () => {
  it('answers 404 for an unknown device code', async () => {
    expectError(await poll('no-such-device-code'), 404);
  });

  it.each([[{}], [{ deviceCode: '' }], [{ deviceCode: 12 }]])('answers 400 for %j', async (body) => {
    expectError(await h.post('/hub/link/poll', { body }), 400);
  });

  it('is public: it needs no credential, and a stray one changes nothing', async () => {
    const link = await startLink(h);
    const res = await h.post('/hub/link/poll', {
      body: { deviceCode: link.deviceCode },
      headers: { Authorization: 'Bearer nonsense', 'X-User-Token': 'usr_nonsense' },
    });
    expectOk(res);
    expect(res.body.status).toBe('pending');
  });
});

describe('approval routes', () => {
  it('answer 404 for unknown and malformed codes', async () => {
    for (const code of ['BCDF-GHJK', 'AAAA-AAAA', 'short', '12345678']) {
      expectError(await approve(code), 404);
      expectError(await deny(code), 404);
      expectError(await h.get(`/hub/me/link/${encodeURIComponent(code)}`, { headers: human.auth }), 404);
    }
  });

  it('answer 400 without a user code', async () => {
    expectError(await h.post('/hub/me/link/approve', { headers: human.auth, body: {} }), 400);
    expectError(await h.post('/hub/me/link/deny', { headers: human.auth, body: {} }), 400);
  });

  it('need the dashboard JWT: a usr_ token cannot approve a link', async () => {
    const token = await linkAgent(h, human);
    const link = await startLink(h);
    expectError(await h.post('/hub/me/link/approve', { body: { userCode: link.userCode } }), 401);
    expectError(
      await h.post('/hub/me/link/approve', {
        headers: { 'X-User-Token': token },
        body: { userCode: link.userCode },
      }),
      401,
    );
    expectError(
      await h.post('/hub/me/link/approve', {
        headers: { Authorization: `Bearer ${token}` },
        body: { userCode: link.userCode },
      }),
      401,
    );
    expect((await poll(link.deviceCode)).body.status).toBe('pending');
  });
});

describe.runIf(onPostgres())('across two nodes on one database', () => {
  it('start on one node, approve on the other, and only one of the polls racing on both collects the token', async () => {
    await withServer({}, async ({ srv: a, h: ha }) => {
      const second = { config: { publicUrl: a.url }, databaseUrl: a.databaseUrl as string };
      await withServer(second, async ({ h: hb }) => {
        const me = await signup(ha);
        const link = await startLink(ha, 'Two-node agent');
        expectOk(
          await hb.post('/hub/me/link/approve', { headers: me.auth, body: { userCode: link.userCode } }),
        );
        const polls = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 ? ha : hb).post('/hub/link/poll', { body: { deviceCode: link.deviceCode } }),
          ),
        );
        expect(polls.filter((r) => r.status === 200)).toHaveLength(1);
        expect(polls.filter((r) => r.status === 410)).toHaveLength(9);
        const token = polls.find((r) => r.status === 200)?.body.token;
        const space = await hb.createSpace({}, { 'X-User-Token': token });
        expect((await ha.get(`/hub/space/${space.spaceId}/key`, { headers: me.auth })).body.privateKey).toBe(
          space.ownerKey,
        );
      });
    });
  });
});
