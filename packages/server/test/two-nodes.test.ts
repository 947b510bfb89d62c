import { randomUUID } from 'node:crypto';
import {
  AuthenticationError,
  ConflictError,
  ConveneError,
  type PendingJoin,
  type SpaceClient,
} from '@convene/sdk';
import { describe, expect, it } from 'vitest';
import {
  expectAnswer,
  expectOk,
  onPostgres,
  participantRow,
  recordedEvents,
  sdkError,
  useServer,
  withServer,
} from './helpers';
import { bearer, linkAgent, signup } from './helpers/accounts';
import { SseStream } from './helpers/sse';

/** Two server processes' worth of nodes on one PostgreSQL database serve the same spaces. */
describe.runIf(onPostgres())('two nodes on one database', () => {
  const { srv: a, h: onA, sdk: sdkA } = useServer();
  const { srv: b, h: onB, sdk: sdkB } = useServer(() => ({ databaseUrl: a.databaseUrl! }));
  /** The status a settled call answered with (200 for a success). */
  const statusOf = (result: PromiseSettledResult<unknown>): number | undefined =>
    result.status === 'fulfilled'
      ? 200
      : result.reason instanceof ConveneError
        ? result.reason.status
        : undefined;

  it('creates on one node, joins, approves and kicks on the other', async () => {
    const space = await sdkA.createSpace({ privacy: 'private' });
    const ownerOnB = sdkB.space(space.spaceId, space.ownerKey, space.ownerId);
    const invitation = (await ownerOnB.invitations.create()).publicInvitationKey;

    const join = await sdkB
      .hub()
      .join(space.spaceId, invitation, { name: 'Roamer', wait: false })
      .withResponse();
    expectAnswer(join, 202);
    const pendingOnB = join.data as PendingJoin;
    const participantId = pendingOnB.participantId;
    // Each node hands out its own PUBLIC_URL.
    expect(join.response.headers.get('location')).toBe(
      `${b.url}/hub/space/${space.spaceId}/join/${participantId}`,
    );
    const pendingOnA = sdkA.hub().pendingJoin({
      spaceId: space.spaceId,
      invitationKey: invitation,
      participantId,
      pollToken: pendingOnB.pollToken,
    });

    const waiting = await pendingOnA.check().withResponse();
    expectAnswer(waiting, 202);
    expect(waiting.data).toBeNull();
    expectAnswer(await space.owner.participants.approve(participantId).withResponse());
    const poll = await pendingOnB.check().withResponse();
    expectAnswer(poll);
    const key = (poll.data as SpaceClient).key;
    // The same key from whichever node is asked next (the joiner may collect it again for a while).
    expect((await pendingOnA.check())?.key).toBe(key);

    const meOnA = sdkA.space(space.spaceId, key);
    const meOnB = sdkB.space(space.spaceId, key);
    expectAnswer(await meOnA.get().withResponse());
    expectAnswer(await ownerOnB.participants.mute(participantId).withResponse());
    const seenOnA = await space.owner.get();
    expect(seenOnA.participants).toContainEqual(expect.objectContaining({ participantId, status: 'muted' }));
    expectAnswer(await space.owner.participants.unmute(participantId).withResponse());
    expectAnswer(await ownerOnB.participants.kick(participantId).withResponse());
    await sdkError(meOnA.get(), AuthenticationError);
    await sdkError(meOnB.get(), AuthenticationError);
    expect((await participantRow(a, space.spaceId, participantId))?.status).toBe('kicked');

    expectAnswer(await space.owner.close().withResponse());
    const closed = await sdkError(ownerOnB.update({ name: 'x' }), ConflictError);
    expect(closed.body).toEqual({ error: 'space is closed', code: 'space_closed' });

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
    const space = await sdkA.createSpace({ privacy: 'private' });
    const pending = await sdkA.joinPending(space.owner);
    const ownerOnB = sdkB.space(space.spaceId, space.ownerKey);
    const approve = (owner: SpaceClient) => owner.participants.approve(pending.participantId);
    const results = await Promise.allSettled([
      approve(space.owner),
      approve(ownerOnB),
      approve(space.owner),
      approve(ownerOnB),
    ]);
    expect(results.map(statusOf).sort()).toEqual([200, 409, 409, 409]);
    const approvals = (await recordedEvents(a, space.spaceId, 'participant-status')).filter(
      (e) => e.data.status === 'active',
    );
    expect(approvals).toHaveLength(1);
  });

  it('hands a pending key to its joiner, the same on both nodes polled at once', async () => {
    const space = await sdkB.createSpace({ privacy: 'private' });
    const pending = await sdkB.joinPending(space.owner);
    expectAnswer(
      await sdkA
        .space(space.spaceId, space.ownerKey)
        .participants.approve(pending.participantId)
        .withResponse(),
    );
    const pendingOnA = sdkA.hub().pendingJoin({
      spaceId: space.spaceId,
      invitationKey: pending.invitationKey,
      participantId: pending.participantId,
      pollToken: pending.pollToken,
    });
    const polls = await Promise.allSettled([
      pendingOnA.check(),
      pending.check(),
      pendingOnA.check(),
      pending.check(),
    ]);
    // A poll resolves with the client once approved (200), with null while pending (202); within
    // the window after the first collection every poll of the joiner gets the same key.
    const statuses = polls.map((r) => (r.status === 'fulfilled' ? (r.value ? 200 : 202) : statusOf(r)));
    expect(statuses).toEqual([200, 200, 200, 200]);
    const keys = polls.map((r) => (r.status === 'fulfilled' ? r.value?.key : undefined));
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f]{64}$/);
  });

  it('closes once when both nodes are asked at once', async () => {
    const space = await sdkA.createSpace();
    const results = await Promise.allSettled([
      space.owner.close(),
      sdkB.space(space.spaceId, space.ownerKey).close(),
    ]);
    expect(results.map(statusOf).sort()).toEqual([200, 409]);
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

  it('replays on one node what the other recorded, with the replaying node’s PUBLIC_URL', async () => {
    const space = await onA.createSpace({ privacy: 'private' });
    const invite = { key: space.ownerKey, headers: { 'Idempotency-Key': randomUUID() } };
    const first = await onA.post(`/hub/space/${space.spaceId}/invite`, invite);
    expectOk(first);
    expect(first.body.humanLink.startsWith(`${a.url}/join/`)).toBe(true);
    const replay = await onB.post(`/hub/space/${space.spaceId}/invite`, invite);
    expectOk(replay);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body.publicInvitationKey).toBe(first.body.publicInvitationKey);
    expect(replay.body.humanLink).toBe(first.body.humanLink.replace(a.url, b.url));
    expect(replay.body.agentLink).toBe(first.body.agentLink.replace(a.url, b.url));
    expect(replay.text).not.toContain(a.url);
    expect([...replay.headers.keys()].filter((name) => name.startsWith('x-convene'))).toEqual([]);

    // A join waiting for approval: its Location and statusUrl too.
    const join = {
      key: first.body.publicInvitationKey,
      body: { name: 'Twice' },
      headers: { 'Idempotency-Key': randomUUID() },
    };
    const waiting = await onA.post(`/hub/space/${space.spaceId}/join`, join);
    expect(waiting.status, waiting.text).toBe(202);
    const again = await onB.post(`/hub/space/${space.spaceId}/join`, join);
    expect(again.status, again.text).toBe(202);
    expect(again.headers.get('location')).toBe(waiting.headers.get('location')!.replace(a.url, b.url));
    expect(again.text).not.toContain(a.url);
  });

  it("gives each node's streams its own PUBLIC_URL in participant-status events, live and replayed", async () => {
    const space = await onA.createSpace();
    const streams: SseStream[] = [];
    try {
      for (const node of [a, b]) {
        const stream = await SseStream.connect(node.listenUrl, space.spaceId, { key: space.ownerKey });
        await stream.until((e) => e.event === 'context');
        streams.push(stream);
      }
      // The event is recorded on A, with A's URL at hand.
      const alice = await onA.joinActive(space, { name: 'Alice' });
      const avatar = (node: { url: string }) => `${node.url}/avatar/${alice.participantId}.svg`;
      const onStreamA = (await streams[0]!.until((e) => e.event === 'participant-status')).at(-1)!;
      const onStreamB = (await streams[1]!.until((e) => e.event === 'participant-status')).at(-1)!;
      expect(onStreamA.json.avatarUrl).toBe(avatar(a));
      expect(onStreamB.json.avatarUrl).toBe(avatar(b));

      const replay = await SseStream.connect(b.listenUrl, space.spaceId, {
        key: space.ownerKey,
        lastEventId: '0',
      });
      streams.push(replay);
      const replayed = (await replay.until((e) => e.event === 'participant-status')).at(-1)!;
      expect(replayed.id).toBe(onStreamB.id);
      expect(replayed.json.avatarUrl).toBe(avatar(b));
    } finally {
      for (const stream of streams) stream.close();
    }
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
