import { describe, expect, it } from 'vitest';
import {
  expectError,
  expectOk,
  onPostgres,
  participantRow,
  recordedEvents,
  useServer,
  withServer,
} from './helpers';
import { bearer, linkAgent, signup } from './helpers/accounts';
import { SseStream } from './helpers/sse';

/** Two server processes' worth of nodes on one PostgreSQL database serve the same spaces. */
describe.runIf(onPostgres())('two nodes on one database', () => {
  const { srv: a, h: onA } = useServer();
  const { srv: b, h: onB } = useServer(() => ({ databaseUrl: a.databaseUrl! }));

  it('creates on one node, joins, approves and kicks on the other', async () => {
    const space = await onA.createSpace({ privacy: 'private' });
    const base = `/hub/space/${space.spaceId}`;
    const invitation = await onB.invite(space);

    const join = await onB.post(`${base}/join`, { key: invitation, body: { name: 'Roamer' } });
    expectOk(join, 202);
    const participantId = join.body.participantId;
    const polling = { key: invitation, headers: { 'X-Poll-Token': join.body.pollToken } };
    // Each node hands out its own PUBLIC_URL.
    expect(join.headers.get('location')).toBe(`${b.url}${base}/join/${participantId}`);

    expectOk(await onA.get(`${base}/join/${participantId}`, polling), 202);
    expectOk(await onA.post(`${base}/participants/${participantId}/approve`, { key: space.ownerKey }));
    const poll = await onB.get(`${base}/join/${participantId}`, polling);
    expectOk(poll);
    const key = poll.body.participantPrivateKey;
    // Collected once, whichever node is asked next.
    expectError(await onA.get(`${base}/join/${participantId}`, polling), 404);

    expectOk(await onA.get(base, { key }));
    expectOk(await onB.post(`${base}/participants/${participantId}/mute`, { key: space.ownerKey }));
    const seenOnA = await onA.get(base, { key: space.ownerKey });
    expect(seenOnA.body.participants).toContainEqual(
      expect.objectContaining({ participantId, status: 'muted' }),
    );
    expectOk(await onA.post(`${base}/participants/${participantId}/unmute`, { key: space.ownerKey }));
    expectOk(await onB.post(`${base}/participants/${participantId}/kick`, { key: space.ownerKey }));
    expectError(await onA.get(base, { key }), 401);
    expectError(await onB.get(base, { key }), 401);
    expect((await participantRow(a, space.spaceId, participantId))?.status).toBe('kicked');

    expectOk(await onA.delete(base, { key: space.ownerKey }));
    const closed = await onB.put(base, { key: space.ownerKey, body: { name: 'x' } });
    expectError(closed, 409);
    expect(closed.body).toEqual({ error: 'space is closed' });

    const events = await recordedEvents(b, space.spaceId);
    expect(events.map((e) => e.data.status ?? e.kind)).toEqual([
      'waitingForApproval',
      'active',
      'muted',
      'active',
      'kicked',
      'space-closed',
    ]);
  });

  it('applies concurrent moderations of one participant one at a time', async () => {
    const space = await onA.createSpace({ privacy: 'private' });
    const pending = await onA.joinPending(space);
    const path = `/hub/space/${space.spaceId}/participants/${pending.participantId}/approve`;
    const results = await Promise.all([
      onA.post(path, { key: space.ownerKey }),
      onB.post(path, { key: space.ownerKey }),
      onA.post(path, { key: space.ownerKey }),
      onB.post(path, { key: space.ownerKey }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
    const approvals = (await recordedEvents(a, space.spaceId, 'participant-status')).filter(
      (e) => e.data.status === 'active',
    );
    expect(approvals).toHaveLength(1);
  });

  it('hands a pending key out once when both nodes are polled at once', async () => {
    const space = await onB.createSpace({ privacy: 'private' });
    const pending = await onB.joinPending(space);
    expectOk(
      await onA.post(`/hub/space/${space.spaceId}/participants/${pending.participantId}/approve`, {
        key: space.ownerKey,
      }),
    );
    const path = `/hub/space/${space.spaceId}/join/${pending.participantId}`;
    const polling = { key: pending.invitationKey, headers: { 'X-Poll-Token': pending.pollToken } };
    const polls = await Promise.all([
      onA.get(path, polling),
      onB.get(path, polling),
      onA.get(path, polling),
      onB.get(path, polling),
    ]);
    expect(polls.map((r) => r.status).sort()).toEqual([200, 404, 404, 404]);
  });

  it('closes once when both nodes are asked at once', async () => {
    const space = await onA.createSpace();
    const path = `/hub/space/${space.spaceId}`;
    const results = await Promise.all([
      onA.delete(path, { key: space.ownerKey }),
      onB.delete(path, { key: space.ownerKey }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(await recordedEvents(a, space.spaceId, 'space-closed')).toHaveLength(1);
  });

  it('accept a dashboard session minted by either node, whatever their PUBLIC_URLs, across restarts', async () => {
    expect(a.url).not.toBe(b.url);
    const human = await signup(onA);
    const me = await onB.get('/hub/me', { headers: human.auth });
    expectOk(me);
    expect(me.body.id).toBe(human.id);
    // Tokens: minted on B with A's session, listed on A, revoked on B with a session from B.
    const minted = await onB.post('/hub/me/tokens', { headers: human.auth, body: { name: 'cross' } });
    expectOk(minted, 201);
    const login = await onB.post('/hub/auth/login', {
      body: { email: human.email, password: human.password },
    });
    expectOk(login);
    const listed = await onA.get('/hub/me/tokens', { headers: bearer(login.body.token) });
    expect(listed.body.map((t: { id: string }) => t.id)).toContain(minted.body.id);
    // Key recovery with either session on either node; the browser-link flow across nodes.
    const space = await onA.createSpace({}, { 'X-User-Token': minted.body.token });
    for (const [node, jwt] of [
      [onA, login.body.token],
      [onB, human.jwt],
    ] as const) {
      const key = await node.get(`/hub/space/${space.spaceId}/key`, { headers: bearer(jwt) });
      expectOk(key);
      expect(key.body).toEqual({ role: 'owner', privateKey: space.ownerKey });
    }
    expect(await linkAgent(onB, human)).toMatch(/^usr_/);
    expectOk(
      await onA.delete(`/hub/me/tokens/${minted.body.id}`, { headers: bearer(login.body.token) }),
      204,
    );
    // The same JWKS on both nodes; a node started later on the same database keeps the sessions.
    expect((await onA.get('/.well-known/jwks.json')).body).toEqual(
      (await onB.get('/.well-known/jwks.json')).body,
    );
    await withServer({ databaseUrl: a.databaseUrl! }, async ({ h: onC }) => {
      expectOk(await onC.get('/hub/me', { headers: human.auth }));
    });
  });

  it('announce a lapsed lock once, on the streams of both nodes, within 5 s of its expiry', async () => {
    const config = { lockTtlSeconds: 2 };
    await withServer({ config }, ({ srv: x, h: onX }) =>
      withServer({ databaseUrl: x.databaseUrl!, config }, async ({ srv: y, h: onY }) => {
        const streams: SseStream[] = [];
        try {
          const space = await onX.createSpace();
          const alice = await onX.joinActive(space, { name: 'Alice' });
          const created = await onX.post(`/hub/space/${space.spaceId}/artifact`, {
            key: alice.key,
            body: { name: 'Doc', type: 'markdown', content: 'v1' },
          });
          for (const node of [x, y]) {
            const stream = await SseStream.connect(node.listenUrl, space.spaceId, { key: space.ownerKey });
            await stream.until((e) => e.event === 'context');
            streams.push(stream);
          }
          const path = `/hub/space/${space.spaceId}/artifact/${created.body.id}/lock`;
          const lock = await onY.post(path, { key: alice.key });
          expectOk(lock);
          const expiresAt = Date.parse(lock.body.lockExpiresAt);
          for (const stream of streams) {
            await stream.until((e) => e.event === 'artifact-unlocked', 9000);
            expect(Date.now() - expiresAt).toBeLessThan(5000);
          }
          // Both nodes sweep every second: still one event after a few more rounds.
          await new Promise((resolve) => setTimeout(resolve, 2500));
          for (const stream of streams)
            expect(stream.remaining.filter((e) => e.event === 'artifact-unlocked')).toEqual([]);
          expect(await recordedEvents(x, space.spaceId, 'artifact-unlocked')).toHaveLength(1);
        } finally {
          for (const stream of streams) stream.close();
        }
      }),
    );
  });
});
