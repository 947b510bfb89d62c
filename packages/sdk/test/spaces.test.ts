import { describe, expect, it } from 'vitest';
import {
  AbortError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  ConveneError,
  type DisconnectInfo,
  NotFoundError,
  PendingJoin,
  PermissionDeniedError,
  SpaceClient,
} from '../src';
import { hub, ownedSpace, participant, serverUrl, until } from './helpers';

describe('spaces', () => {
  it('creates, reads, updates and closes a space', async () => {
    const client = hub();
    const space = await client.spaces.create({
      name: 'Release',
      description: 'Plan 2.0',
      agenda: 'scope',
      privacy: 'private',
      ttl: 3600,
    });
    expect(space.spaceId).toMatch(/^[0-9a-f-]{36}$/);
    expect(space.ownerPrivateKey).toMatch(/^[0-9a-f]{64}$/);
    const owner = client.space(space.spaceId, space.ownerPrivateKey);

    const view = await owner.get();
    expect(view).toMatchObject({
      spaceId: space.spaceId,
      name: 'Release',
      description: 'Plan 2.0',
      agenda: 'scope',
      privacy: 'private',
      state: 'open',
    });
    expect(view.ttlRemaining).toBeGreaterThan(3500);
    expect(view.participants).toEqual([
      expect.objectContaining({ participantId: space.ownerId, isOwner: true }),
    ]);

    expect(await owner.update({ agenda: 'scope and dates' })).toEqual({ ok: true });
    expect((await owner.get()).agenda).toBe('scope and dates');

    expect(await owner.close()).toEqual({ ok: true });
    // A closed space's keys stop working: 409 where the operation lists it, else 401.
    await expect(owner.update({ agenda: 'x' })).rejects.toBeInstanceOf(ConflictError);
    await expect(owner.get()).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('gives the HTTP response with withResponse()', async () => {
    const { owner } = await ownedSpace();
    const { data, response } = await owner.get().withResponse();
    expect(data.state).toBe('open');
    expect(response.status).toBe(200);
    expect(response.headers.get('api-version')).toBe('1');
    expect(Number(response.headers.get('ratelimit-remaining'))).toBeGreaterThan(0);
    // An APIPromise is a Promise: then, catch and finally work, and their results are plain Promises.
    const promise = owner.get();
    expect(promise).toBeInstanceOf(Promise);
    const chained = promise.then((view) => view.name);
    expect(chained.constructor).toBe(Promise);
    expect(await chained).toBe('SDK test space');
  });

  it("carries the server's Request-Id on answers and errors", async () => {
    const { owner, spaceId } = await ownedSpace();
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const { response } = await owner.messages.send('hi').withResponse();
    const first = response.headers.get('request-id');
    expect(first).toMatch(uuid);
    const { response: again } = await owner.get().withResponse();
    expect(again.headers.get('request-id')).toMatch(uuid);
    expect(again.headers.get('request-id')).not.toBe(first);

    const error = await hub()
      .space(spaceId, 'f'.repeat(64))
      .get()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    const { requestId } = error as AuthenticationError;
    expect(requestId).toMatch(uuid);
    expect(requestId).toBe((error as AuthenticationError).headers?.get('request-id'));
    // Every error status carries it, a 404 too.
    const missing = await owner.artifacts
      .get('00000000-0000-4000-8000-000000000000')
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as NotFoundError).requestId).toMatch(uuid);
    // An id of the caller's own (e.g. a trace id) is echoed, so both logs can be joined.
    const traced = await owner.get({ headers: { 'Request-Id': 'trace-42' } }).withResponse();
    expect(traced.response.headers.get('request-id')).toBe('trace-42');
  });

  it('throws typed errors with status, body, headers and message', async () => {
    const client = hub();
    const { spaceId } = await ownedSpace(client);
    const error = await client
      .space(spaceId, 'f'.repeat(64))
      .get()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toBeInstanceOf(ConveneError);
    const auth = error as AuthenticationError;
    expect(auth.status).toBe(401);
    expect(auth.name).toBe('AuthenticationError');
    expect(auth.body?.error).toEqual(expect.any(String));
    expect(auth.message).toBe(`401 ${auth.body?.error}`);
    expect(auth.code).toBe('key_unknown');
    expect(auth.body?.code).toBe('key_unknown');
    expect(auth.headers?.get('www-authenticate')).toContain('resource_metadata=');

    await expect(client.space('not-a-uuid', 'f'.repeat(64)).get()).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.spaces.create({ name: '', description: 'x' })).rejects.toMatchObject({
      name: 'BadRequestError',
      status: 400,
      code: 'invalid_request',
    });
  });

  it('lists the fields a request got wrong as a 400’s issues, for a form to mark them', async () => {
    const error = await hub()
      .spaces.create({ name: '', description: 'x', ttl: -1 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    const { issues, body } = error as BadRequestError;
    expect(issues).toEqual(
      expect.arrayContaining([
        { path: ['name'], message: expect.any(String) },
        { path: ['ttl'], message: expect.any(String) },
      ]),
    );
    expect(body?.issues).toEqual(issues);
    // A mention of someone not in the space names the mention at fault.
    const { owner } = await ownedSpace();
    const nobody = '00000000-0000-4000-8000-000000000000';
    const mention = await owner.messages.send({ content: 'x', mentions: [nobody] }).catch((e: unknown) => e);
    expect(mention).toBeInstanceOf(BadRequestError);
    expect((mention as BadRequestError).issues).toEqual([
      {
        path: ['mentions', 0],
        message: `${nobody} is not a current participant of this space (active or muted)`,
      },
    ]);
    // A 400 of no field (a header broke its limit) has none.
    const header = await owner.messages
      .send({ content: 'x' }, { idempotencyKey: 'k'.repeat(256) })
      .catch((e: unknown) => e);
    expect(header).toBeInstanceOf(BadRequestError);
    expect((header as BadRequestError).message).toMatch(/Idempotency-Key/);
    expect((header as BadRequestError).issues).toBeUndefined();
  });
});

describe('invitations and joining', () => {
  it('joins a public space with an agentLink, a humanLink, or the space id and key', async () => {
    const client = hub();
    const { owner, spaceId } = await ownedSpace(client);
    const invitation = await owner.invitations.create();
    expect(invitation.agentLink).toContain(`/hub/space/${spaceId}/agent.md?key=`);

    const viaAgentLink = await client.join(invitation.agentLink, {
      name: 'A',
      role: 'writer',
      isHuman: false,
    });
    expect(viaAgentLink).toBeInstanceOf(SpaceClient);
    expect(viaAgentLink.spaceId).toBe(spaceId);
    expect(viaAgentLink.key).toMatch(/^[0-9a-f]{64}$/);
    const viaHumanLink = await client.join(invitation.humanLink, { name: 'B', isHuman: true });
    const viaKey = await client.join(spaceId, invitation.publicInvitationKey, { name: 'C' });

    const view = await viaKey.get();
    const byName = Object.fromEntries(view.participants.map((p) => [p.name, p]));
    expect(byName.A).toMatchObject({
      participantId: viaAgentLink.participantId,
      status: 'active',
      role: 'writer',
    });
    expect(byName.B).toMatchObject({ participantId: viaHumanLink.participantId, isHuman: true });
    expect(byName.C?.participantId).toBe(viaKey.participantId);
  });

  it('waits through the owner approval of a private space', async () => {
    const client = hub();
    const { owner } = await ownedSpace(client, { privacy: 'private' });
    const invitation = await owner.invitations.create();

    const joining = client.join(invitation.agentLink, { name: 'Waiting', pollIntervalMs: 100 });
    const waiting = await until(async () =>
      (await owner.get()).participants.find((p) => p.status === 'waitingForApproval'),
    );
    await owner.participants.approve(waiting.participantId);
    const { data: me, response } = await joining.withResponse();
    expect(response.status).toBe(200);
    expect(me.participantId).toBe(waiting.participantId);
    expect((await me.messages.send('approved and in')).messageId).toEqual(expect.any(String));
  });

  it('keeps waiting for the approval through polls that get no answer (a server restart)', async () => {
    const { owner } = await ownedSpace(hub(), { privacy: 'private' });
    const invitation = await owner.invitations.create();
    // The first three status polls meet a refused connection, as while the server restarts.
    let polls = 0;
    const restarting: typeof fetch = async (input, init) => {
      if (/\/join\/[0-9a-f-]{36}$/.test(String(input)) && ++polls <= 3)
        throw new TypeError('fetch failed', {
          cause: Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' }),
        });
      return fetch(input, init);
    };
    // No retry inside a poll: each refused connection reaches the wait itself, and its hooks.
    const disconnects: DisconnectInfo[] = [];
    const reconnects: { attempts: number }[] = [];
    const joined = hub({ fetch: restarting, maxRetries: 0 })
      .join(invitation.agentLink, {
        name: 'Patient',
        pollIntervalMs: 50,
        onDisconnect: (info) => disconnects.push(info),
        onReconnect: (info) => reconnects.push(info),
      })
      .then(
        (client) => client,
        (error: unknown) => error,
      );
    await until(() => (polls > 3 ? true : undefined));
    const waiting = await until(async () =>
      (await owner.get()).participants.find((p) => p.status === 'waitingForApproval'),
    );
    await owner.participants.approve(waiting.participantId);
    // Without the wait's patience, the join (and its pollToken) would be lost to the first failure.
    const me = await joined;
    expect(me).toBeInstanceOf(SpaceClient);
    expect((me as SpaceClient).participantId).toBe(waiting.participantId);
    // Told as it happens, so a waiting joiner can say the server is away, then back.
    expect(disconnects.map(({ attempt, delayMs }) => ({ attempt, delayMs }))).toEqual([
      { attempt: 1, delayMs: 50 },
      { attempt: 2, delayMs: 50 },
      { attempt: 3, delayMs: 50 },
    ]);
    for (const { error } of disconnects) expect(error).toBeInstanceOf(ConnectionError);
    expect(reconnects).toEqual([{ attempts: 3 }]);
  });

  it('sends the pollToken of the 202 as X-Poll-Token, and no such header when the 202 has none', async () => {
    const { owner } = await ownedSpace(hub(), { privacy: 'private' });
    /** A fetch that records each join's pollToken and each status poll's X-Poll-Token. */
    const recording = (inject: string | undefined) => {
      const seen = { pollToken: undefined as string | undefined, headers: [] as (string | null)[] };
      const impl: typeof fetch = async (input, init) => {
        const response = await fetch(input, init);
        const url = String(input);
        if (/\/join\/[0-9a-f-]{36}$/.test(url))
          seen.headers.push(new Headers(init?.headers).get('x-poll-token'));
        if (!url.endsWith('/join') || response.status !== 202) return response;
        const body = (await response.json()) as Record<string, unknown>;
        // The server's own pollToken (issue 16) is kept; a server without one gets the injected one.
        if (inject && body.pollToken === undefined) body.pollToken = inject;
        seen.pollToken = body.pollToken as string | undefined;
        return new Response(JSON.stringify(body), { status: 202, headers: response.headers });
      };
      return { impl, seen };
    };
    for (const inject of ['injected-poll-token', undefined]) {
      const { impl, seen } = recording(inject);
      const invitation = await owner.invitations.create();
      const pending = (await hub({ fetch: impl }).join(invitation.agentLink, {
        name: `poller ${inject ?? 'plain'}`,
        wait: false,
      })) as PendingJoin;
      expect(pending.pollToken).toBe(seen.pollToken);
      expect(await pending.check()).toBeNull();
      expect(seen.headers).toEqual([seen.pollToken ?? null]);
    }
  });

  it('hands back a PendingJoin with wait: false, resumable from its fields', async () => {
    const client = hub();
    const { owner, spaceId } = await ownedSpace(client, { privacy: 'private' });
    const invitation = await owner.invitations.create();

    const { data: pending, response } = await client
      .join(invitation.agentLink, { name: 'Later', wait: false })
      .withResponse();
    expect(pending).toBeInstanceOf(PendingJoin);
    if (!(pending instanceof PendingJoin)) return;
    expect(pending).toMatchObject({
      status: 'pending',
      spaceId,
      invitationKey: invitation.publicInvitationKey,
    });
    // Where to poll, as the server named it.
    expect(response.status).toBe(202);
    expect(pending.statusUrl).toMatch(new RegExp(`/hub/space/${spaceId}/join/${pending.participantId}$`));
    expect(pending.statusUrl).toBe(response.headers.get('location'));
    expect(await pending.check()).toBeNull();

    // Another process resumes it from its JSON: the four fields it needs, no statusUrl.
    const saved = JSON.parse(JSON.stringify(pending));
    expect(Object.keys(saved).sort()).toEqual(['invitationKey', 'participantId', 'pollToken', 'spaceId']);
    const resumed = hub().pendingJoin(saved);
    await owner.participants.approve(pending.participantId);
    const me = await resumed.wait({ pollIntervalMs: 100 });
    expect(me.participantId).toBe(pending.participantId);
    expect((await me.get()).participants.find((p) => p.participantId === me.participantId)?.status).toBe(
      'active',
    );
  });

  it('says of a wait for approval stopped by a signal that the join ran, with the key that resumes that join, not a second one', async () => {
    const client = hub();
    const { owner } = await ownedSpace(client, { privacy: 'private' });
    const invitation = await owner.invitations.create();
    const stopped = await client
      .join(
        invitation.agentLink,
        { name: 'Patient', pollIntervalMs: 100 },
        { signal: AbortSignal.timeout(1500) },
      )
      .catch((e: unknown) => e);
    expect(stopped).toBeInstanceOf(AbortError);
    expect(stopped).toMatchObject({ mayHaveRun: true, idempotencyKey: expect.any(String) });
    const named = async () => (await owner.get()).participants.filter((p) => p.name === 'Patient');
    const [waiting] = await named();
    expect(waiting?.status).toBe('waitingForApproval');
    // Joined again with that key: the same join, waited on again; approved, it is the one admitted.
    const again = await client.join(
      invitation.agentLink,
      { name: 'Patient', wait: false },
      { idempotencyKey: (stopped as AbortError).idempotencyKey },
    );
    expect(again).toBeInstanceOf(PendingJoin);
    expect(again.participantId).toBe(waiting!.participantId);
    await owner.participants.approve(waiting!.participantId);
    const me = await (again as PendingJoin).wait({ pollIntervalMs: 100 });
    expect(me.participantId).toBe(waiting!.participantId);
    expect((await named()).map((p) => p.status)).toEqual(['active']);
  });

  it('gives the key of an approved join to its joiner: the same client again, the same key to a join resumed from its JSON', async () => {
    const client = hub();
    const { owner } = await ownedSpace(client, { privacy: 'private' });
    const invitation = await owner.invitations.create();
    const pending = (await client.join(invitation.agentLink, { name: 'Once', wait: false })) as PendingJoin;
    const saved = JSON.stringify(pending);
    await owner.participants.approve(pending.participantId);

    const me = await pending.check();
    expect(me).toBeInstanceOf(SpaceClient);
    // Asked again, the same object gives the same client without asking the server.
    expect(await pending.check()).toBe(me);
    expect(await pending.wait()).toBe(me);
    // Resumed elsewhere (a process that died before it saved the key): the server gives the same
    // key again to the join's pollToken, for 10 minutes after the first time.
    const resumed = hub().pendingJoin(JSON.parse(saved));
    expect((await resumed.check())?.key).toBe(me!.key);
    expect((await hub().pendingJoin(JSON.parse(saved)).wait({ pollIntervalMs: 50 })).key).toBe(me!.key);
    expect((await me!.get()).participants.some((p) => p.participantId === me!.participantId)).toBe(true);
  });

  it('ends the wait with the server error when the owner refuses the join', async () => {
    const client = hub();
    const { owner } = await ownedSpace(client, { privacy: 'private' });
    const invitation = await owner.invitations.create();
    const pending = (await client.join(invitation.agentLink, {
      name: 'Refused',
      wait: false,
    })) as PendingJoin;
    await owner.participants.kick(pending.participantId);
    const refusal = pending.wait({ pollIntervalMs: 100 });
    await expect(refusal).rejects.toBeInstanceOf(NotFoundError);
    await expect(refusal).rejects.toThrow(/^404 join request refused: /);
    await expect(refusal).rejects.toMatchObject({ code: 'join_refused' });
  });

  it('a refused join is over: its idempotencyKey replays the refusal, a new join asks again (as the README says)', async () => {
    const client = hub();
    const { owner } = await ownedSpace(client, { privacy: 'private' });
    const { agentLink } = await owner.invitations.create();
    // Its outcome is taken at once: the wait's poll may meet the refusal before reject() has its answer.
    const outcome = client.join(agentLink, { name: 'Refused', pollIntervalMs: 50 }).then(
      () => 'a refused join resolved',
      (error: unknown) => error as NotFoundError,
    );
    const refused = await until(async () =>
      (await owner.get()).participants.find((p) => p.status === 'waitingForApproval'),
    );
    await owner.participants.reject(refused.participantId);
    const refusal = (await outcome) as NotFoundError;
    expect(refusal).toBeInstanceOf(NotFoundError);
    expect(refusal.code).toBe('join_refused');
    expect(refusal.mayHaveRun).toBe(true);
    // Its key gives the same participant back, refused: the wait throws the same at its first poll.
    const replayed = client.join(
      agentLink,
      { name: 'Refused', pollIntervalMs: 50 },
      { idempotencyKey: refusal.idempotencyKey! },
    );
    await expect(replayed).rejects.toMatchObject({ code: 'join_refused' });
    // Without it, a new participant waits.
    const again = (await client.join(agentLink, { name: 'Refused', wait: false })) as PendingJoin;
    expect(again.participantId).not.toBe(refused.participantId);
    const statuses = (await owner.get()).participants
      .filter((p) => p.name === 'Refused')
      .map((p) => p.status);
    expect(statuses.sort()).toEqual(['kicked', 'waitingForApproval']);
  });

  it('rejects a joiner waiting for approval (the kick route), and refuses to reject one admitted', async () => {
    const client = hub();
    const { owner } = await ownedSpace(client, { privacy: 'private' });
    const invitation = await owner.invitations.create();
    const waiting = (await client.join(invitation.agentLink, {
      name: 'Waiting',
      wait: false,
    })) as PendingJoin;
    const admitted = (await client.join(invitation.agentLink, {
      name: 'Admitted',
      wait: false,
    })) as PendingJoin;
    await owner.participants.approve(admitted.participantId);

    // What the owner sees of a joiner waiting, and refuses.
    const before = await owner.get();
    expect(before.participants.find((p) => p.participantId === waiting.participantId)?.status).toBe(
      'waitingForApproval',
    );
    await expect(owner.participants.reject(waiting.participantId)).resolves.toEqual({ ok: true });
    await expect(waiting.wait({ pollIntervalMs: 100 })).rejects.toThrow(/^404 join request refused: /);

    // Someone admitted is kick's to remove: the server refuses the kick (`ifStatus`), and they stay.
    // Refused as it refuses approving them (trial 51): a ConflictError with their participantStatus.
    const error = await owner.participants.reject(admitted.participantId).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({
      status: 409,
      message: '409 cannot refuse a participant who is already active',
      code: 'participant_status_conflict',
      participantStatus: 'active',
      operation: 'kickParticipant',
      mayHaveRun: false,
    });
    const after = await owner.get();
    expect(after.participants.find((p) => p.participantId === admitted.participantId)?.status).toBe('active');
  });

  it('leaves a joiner approved elsewhere just before reject() arrives: the server checks their status as it kicks', async () => {
    const client = hub();
    const { owner, spaceId } = await ownedSpace(client, { privacy: 'private' });
    const invitation = await owner.invitations.create();
    const joiner = (await client.join(invitation.agentLink, { name: 'Late', wait: false })) as PendingJoin;
    // Another process of the owner approves the joiner after this one decided to refuse them (it
    // saw them waiting), just before its refusal reaches the server.
    const elsewhere = hub().space(spaceId, owner.key);
    const racing = hub({
      fetch: async (input, init) => {
        if (init?.method === 'POST' && String(input).endsWith('/kick'))
          await elsewhere.participants.approve(joiner.participantId);
        return fetch(input, init);
      },
    }).space(spaceId, owner.key);
    const seen = await racing.get();
    expect(seen.participants.find((p) => p.participantId === joiner.participantId)?.status).toBe(
      'waitingForApproval',
    );
    const error = await racing.participants.reject(joiner.participantId).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ code: 'participant_status_conflict', participantStatus: 'active' });
    // Admitted, not removed: their poll collects the key, which works.
    const admitted = await joiner.wait({ pollIntervalMs: 100 });
    await expect(admitted.get()).resolves.toMatchObject({ spaceId });
  });

  it('stops waiting when the signal aborts', async () => {
    const client = hub();
    const { owner, spaceId } = await ownedSpace(client, { privacy: 'private' });
    const invitation = await owner.invitations.create();
    const controller = new AbortController();
    const joining = client.join(
      invitation.agentLink,
      { name: 'Impatient', pollIntervalMs: 50 },
      {
        signal: controller.signal,
      },
    );
    await until(async () => (await owner.get()).participants.find((p) => p.status === 'waitingForApproval'));
    controller.abort();
    await expect(joining).rejects.toMatchObject({ name: 'AbortError' });

    // Aborted between two polls, it names the poll it waited to make, as every AbortError does.
    const slow = client.join(
      invitation.agentLink,
      { name: 'Deadline', pollIntervalMs: 60_000 },
      { signal: AbortSignal.timeout(1000) },
    );
    const error = await slow.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortError);
    expect((error as Error).message).toMatch(
      new RegExp(`^aborted \\(getJoinStatus: GET ${serverUrl()}/hub/space/${spaceId}/join/[0-9a-f-]{36}\\)$`),
    );
    expect((error as Error).cause).toMatchObject({ name: 'TimeoutError' });
  });

  // README, "Join a private space" (trial 51 read `timeoutMs` as ending the wait, as the README
  // then said, and the join never ended): `timeoutMs` bounds each request; only a signal ends the
  // wait, and its error resumes the same join.
  it('waits past a timeoutMs, which bounds each poll; AbortSignal.timeout ends the wait, and its idempotencyKey resumes the join', async () => {
    const client = hub();
    const { owner } = await ownedSpace(client, { privacy: 'private' });
    const { agentLink } = await owner.invitations.create();
    const joining = client.join(agentLink, { name: 'Patient', pollIntervalMs: 100 }, { timeoutMs: 700 });
    const outcome = await Promise.race([
      joining.then(
        () => 'joined',
        (error: unknown) => `threw ${(error as Error).name}`,
      ),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 2500)),
    ]);
    expect(outcome).toBe('still waiting');
    const waiting = (await owner.get()).participants.find((p) => p.name === 'Patient');
    await owner.participants.approve(waiting!.participantId);
    expect((await joining).participantId).toBe(waiting!.participantId);

    const bounded = await client
      .join(agentLink, { name: 'Bounded', pollIntervalMs: 100 }, { signal: AbortSignal.timeout(700) })
      .catch((e: unknown) => e);
    expect(bounded).toBeInstanceOf(AbortError);
    expect(bounded).toMatchObject({ mayHaveRun: true, idempotencyKey: expect.any(String) });
    const resumed = client.join(
      agentLink,
      { name: 'Bounded', pollIntervalMs: 100 },
      { idempotencyKey: (bounded as AbortError).idempotencyKey! },
    );
    const pending = (await owner.get()).participants.filter((p) => p.name === 'Bounded');
    expect(pending.map((p) => p.status)).toEqual(['waitingForApproval']);
    await owner.participants.approve(pending[0]!.participantId);
    expect((await resumed).participantId).toBe(pending[0]!.participantId);
  });

  it('refuses a link that is not an invitation', async () => {
    await expect(hub().join('https://example.com/nothing', { name: 'x' })).rejects.toThrow(ConveneError);
  });

  it('never repeats a key given in place of the link in its error, which ends up in logs', async () => {
    const { owner } = await ownedSpace();
    const { publicInvitationKey } = await owner.invitations.create();
    // The key alone, as an agent card shows it, instead of the agentLink.
    const refused = await hub()
      .join(publicInvitationKey, { name: 'x' })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConveneError);
    expect((refused as ConveneError).message).toMatch(/invitation link/);
    expect(String(refused)).not.toContain(publicInvitationKey);
  });
});

describe('participants', () => {
  it('mutes, unmutes and kicks; a participant leaves', async () => {
    const { owner } = await ownedSpace();
    const alice = await participant(owner, 'Alice');
    const bob = await participant(owner, 'Bob');

    await owner.participants.mute(alice.participantId!);
    await expect(alice.messages.send('muted?')).rejects.toBeInstanceOf(PermissionDeniedError);
    await owner.participants.unmute(alice.participantId!);
    await alice.messages.send('free again');
    // Unmuting someone who is not muted is a state conflict.
    await expect(owner.participants.unmute(alice.participantId!)).rejects.toBeInstanceOf(ConflictError);
    // Typed: the status that refused it, read off the error as `version` is.
    const refused = await owner.participants.unmute(alice.participantId!).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'participant_status_conflict', participantStatus: 'active' });
    expect((refused as ConflictError).participantStatus).toBe('active');

    await owner.participants.kick(bob.participantId!);
    await expect(bob.get()).rejects.toBeInstanceOf(AuthenticationError);

    expect(await alice.leave()).toEqual({ ok: true });
    await expect(alice.messages.send('gone')).rejects.toBeInstanceOf(AuthenticationError);
    const statuses = Object.fromEntries((await owner.get()).participants.map((p) => [p.name, p.status]));
    expect(statuses).toMatchObject({ Alice: 'left', Bob: 'kicked' });
  });
});

describe('a parameter named like one the call takes (plain JavaScript)', () => {
  it('is refused by the server, naming the one meant, and nothing is made or sent', async () => {
    const client = hub();
    // TypeScript refuses both; plain JavaScript sent them, and the server dropped them: a public
    // space, a message that mentioned nobody.
    const params = { name: 'Board', description: 'secret plans', private: true } as unknown as Parameters<
      typeof client.spaces.create
    >[0];
    const refused = await client.spaces.create(params).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BadRequestError);
    expect((refused as Error).message).toBe('400 unknown field "private": did you mean "privacy"?');
    const { owner } = await ownedSpace(client);
    const message = { content: 'review?', mention: [owner.participantId] } as unknown as Parameters<
      typeof owner.messages.send
    >[0];
    await expect(owner.messages.send(message)).rejects.toThrow(
      /^400 unknown field "mention": did you mean "mentions"\?$/,
    );
    expect((await owner.messages.list()).messages).toEqual([]);
  });
});
