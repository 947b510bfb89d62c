import { FakeClock } from '@convene/core';
import { type ConveneError, GoneError, NotFoundError, type Session } from '@convene/sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectAnswer, expectError, expectOk, onPostgres, sdkError, useServer, withServer } from './helpers';
import { type HumanFixture, linkAgent, signup, startLink } from './helpers/accounts';

// The browser-link flow as the agent (hub.link) and the human's dashboard session (session.link)
// drive it through the SDK; the exact start answer, bad bodies and credentials over raw HTTP.
const clock = new FakeClock('2030-01-01T00:00:00.000Z');
const TTL = 600;
const { srv, h, sdk } = useServer({ clock, config: { linkTtlSeconds: TTL } });
let human: HumanFixture;
/** The human's dashboard session, as the SDK holds it. */
let session: Session;
beforeAll(async () => {
  human = await signup(h);
  session = sdk.hub().session(human.jwt);
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
    const a = await sdk.hub().link.start();
    const b = await sdk.hub().link.start();
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
    const link = await sdk.hub().link.start({ agentName: 'Build bot' });
    for (let i = 0; i < 3; i++) {
      // Polling faster than the interval is answered normally.
      const pending = await link.poll().withResponse();
      expectAnswer(pending);
      expect(pending.data).toEqual({ status: 'pending' });
    }

    const view = await session.link.get(link.userCode).withResponse();
    expectAnswer(view);
    expect(view.data).toEqual({
      agentName: 'Build bot',
      status: 'pending',
      expiresAt: new Date(clock.now().getTime() + TTL * 1000).toISOString(),
    });

    const ok = await session.link.approve(link.userCode).withResponse();
    expectAnswer(ok);
    expect(ok.data).toEqual({ ok: true });

    const approved = await link.poll().withResponse();
    expectAnswer(approved);
    const token = approved.data.token!;
    const prefix = approved.data.prefix!;
    expect(approved.data).toEqual({
      status: 'approved',
      token: expect.stringMatching(/^usr_[A-Za-z0-9_-]{40,}$/),
      prefix: token.slice(0, prefix.length),
    });
    expect(prefix.length).toBeGreaterThanOrEqual(6);

    // Consumed: the token is never handed out again.
    const again = await sdkError(link.poll(), GoneError);
    expect(JSON.stringify(again.body)).not.toContain(token);
    expect((await session.link.get(link.userCode)).status).toBe('consumed');

    // The token belongs to the approving human, named after the agent, and works as X-User-Token.
    const tokens = await session.tokens.list();
    const minted = tokens.find((t) => t.prefix === prefix);
    expect(minted).toMatchObject({ name: 'Build bot', revoked: false });
    const space = await sdk.createSpace({ name: 'Linked' }, sdk.hub({ userToken: token }));
    const mine = await session.spaces();
    expect(mine.spaces.map((s) => s.spaceId)).toContain(space.spaceId);
  });

  it('accepts the user code without the dash and in any case', async () => {
    const link = await sdk.hub().link.start();
    const typed = link.userCode.replace('-', '').toLowerCase();
    expectAnswer(await session.link.get(typed).withResponse());
    expectAnswer(await session.link.approve(` ${typed.slice(0, 4)} ${typed.slice(4)} `).withResponse());
    expect((await link.poll()).status).toBe('approved');
  });

  it('names a token from an anonymous agent generically', async () => {
    const link = await sdk.hub().link.start();
    expect((await session.link.get(link.userCode)).agentName).toBeNull();
    await session.link.approve(link.userCode);
    const { prefix } = await link.poll();
    const tokens = await session.tokens.list();
    expect(tokens.find((t) => t.prefix === prefix)?.name).toBe('Linked agent');
  });

  it('refused: the poll answers denied, and keeps answering it; no token is minted', async () => {
    const other = sdk.hub().session((await signup(h)).jwt);
    const link = await sdk.hub().link.start({ agentName: 'Refused agent' });
    const ok = await other.link.deny(link.userCode).withResponse();
    expectAnswer(ok);
    expect(ok.data).toEqual({ ok: true });
    for (let i = 0; i < 2; i++) {
      const res = await link.poll().withResponse();
      expectAnswer(res);
      expect(res.data).toEqual({ status: 'denied' });
    }
    expect(await other.tokens.list()).toEqual([]);
    // Decided once: neither approve nor deny applies any more.
    await sdkError(other.link.approve(link.userCode), NotFoundError);
    await sdkError(other.link.deny(link.userCode), NotFoundError);
  });

  it('an approved request cannot be approved or refused again', async () => {
    const link = await sdk.hub().link.start();
    expectAnswer(await session.link.approve(link.userCode).withResponse());
    await sdkError(session.link.approve(link.userCode), NotFoundError);
    await sdkError(session.link.deny(link.userCode), NotFoundError);
    expect((await link.poll()).status).toBe('approved');
  });

  it('expires after LINK_TTL_S: the poll answers 410, and the code can no longer be decided', async () => {
    const start = (agentName?: string) => sdk.hub().link.start(agentName ? { agentName } : {});
    const pending = await start();
    const approvedLate = await start();
    const approvedInTime = await start('Late collector');
    const denied = await start();
    expectAnswer(await session.link.approve(approvedInTime.userCode).withResponse());
    expectAnswer(await session.link.deny(denied.userCode).withResponse());

    clock.advance((TTL - 1) * 1000);
    expect(await pending.poll()).toEqual({ status: 'pending' });
    clock.advance(1000);

    await sdkError(pending.poll(), GoneError);
    await sdkError(session.link.approve(approvedLate.userCode), NotFoundError);
    await sdkError(session.link.deny(approvedLate.userCode), NotFoundError);
    await sdkError(approvedLate.poll(), GoneError);
    // An approval nobody collected in time is not handed out late; its token is revoked.
    await sdkError(approvedInTime.poll(), GoneError);
    await sdkError(denied.poll(), GoneError);
    const view = await session.link.get(pending.userCode).withResponse();
    expectAnswer(view);
    expect(view.data.status).toBe('expired');
    const tokens = await session.tokens.list();
    expect(tokens.find((t) => t.name === 'Late collector')).toMatchObject({ revoked: true });
  });

  it('hands the token to exactly one of many concurrent polls', async () => {
    const link = await sdk.hub().link.start();
    await session.link.approve(link.userCode);
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => link.poll()));
    const statuses = results
      .map((r) => (r.status === 'fulfilled' ? 200 : (r.reason as ConveneError).status))
      .sort();
    expect(statuses).toEqual([200, 410, 410, 410, 410, 410, 410, 410]);
    const collected = results.find((r) => r.status === 'fulfilled');
    expect(collected?.status === 'fulfilled' && collected.value.token).toMatch(/^usr_/);
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
