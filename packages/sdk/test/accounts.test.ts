import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AuthenticationError, GoneError, LinkDeniedError, LinkFlow, Session } from '../src';
import { hub, until } from './helpers';

const newAccount = () => ({
  email: `sdk-${randomUUID()}@example.com`,
  password: 'correct horse',
  name: 'Ada',
});

describe('accounts and sessions', () => {
  it('signs up, logs in, reads the account and manages API tokens', async () => {
    const client = hub();
    const account = newAccount();
    const signedUp = await client.auth.signup(account);
    expect(signedUp).toBeInstanceOf(Session);
    expect(signedUp.user?.email).toBe(account.email);

    const { data: session, response } = await client.auth.login(account).withResponse();
    expect(response.status).toBe(200);
    expect(session.token).toEqual(expect.any(String));
    expect(await session.me()).toMatchObject({ email: account.email, name: 'Ada' });

    const created = await session.tokens.create({ name: 'ci' });
    expect(created.token).toMatch(/^usr_/);
    expect((await session.tokens.list()).map((t) => [t.id, t.revoked])).toEqual([[created.id, false]]);
    const revoked = await session.tokens.revoke(created.id).withResponse();
    expect(revoked.response.status).toBe(204);
    expect(revoked.data).toBeUndefined();
    expect((await session.tokens.list())[0]?.revoked).toBe(true);

    await expect(client.auth.login({ ...account, password: 'wrong password' })).rejects.toBeInstanceOf(
      AuthenticationError,
    );
    // A session rebuilt from a kept JWT works as the original.
    expect((await client.session(session.token).me()).id).toBe(signedUp.user?.id);
  });

  it('links spaces created and joined with a user token to the dashboard, and recovers their keys', async () => {
    const session = await hub().auth.signup(newAccount());
    const { token } = await session.tokens.create({ name: 'agent' });
    const agent = hub({ userToken: token });
    const space = await agent.spaces.create({ name: 'Linked', description: 'on the dashboard' });
    const owner = agent.space(space.spaceId, space.ownerPrivateKey);
    const invitation = await owner.invitations.create();
    const me = await agent.join(invitation.agentLink, { name: 'Me again' });

    const { spaces } = await session.spaces();
    expect(spaces.map((s) => [s.spaceId, s.participantId, s.role]).sort()).toEqual(
      [
        [space.spaceId, space.ownerId, 'owner'],
        [space.spaceId, me.participantId, 'participant'],
      ].sort(),
    );
    expect(await agent.spaces.recoverKey(space.spaceId)).toMatchObject({ privateKey: expect.any(String) });
    expect((await session.spaceKey(space.spaceId)).privateKey).toEqual(expect.any(String));
  });

  it('creates with a token the server does not take, unlinked, which recoverKey tells (README, Linking)', async () => {
    const session = await hub().auth.signup(newAccount());
    const { token, id } = await session.tokens.create({ name: 'revoked' });
    await session.tokens.revoke(id);
    for (const userToken of [token, 'usr_mistyped']) {
      const linked = hub({ userToken });
      const space = await linked.spaces.create({ name: 'Unlinked', description: 'token ignored' });
      expect(space.ownerPrivateKey).toEqual(expect.any(String));
      await expect(linked.spaces.recoverKey(space.spaceId)).rejects.toBeInstanceOf(AuthenticationError);
    }
    expect((await session.spaces()).spaces).toEqual([]);
  });
});

describe('the browser-link flow', () => {
  it('hands the agent a usr_ token once the human approves', async () => {
    const agent = hub();
    const link = await agent.link.start({ agentName: 'sdk test agent' });
    expect(link).toBeInstanceOf(LinkFlow);
    expect(link.verificationUriComplete).toContain(`code=${link.userCode}`);
    expect(await link.poll()).toEqual({ status: 'pending' });

    const human = await hub().auth.signup(newAccount());
    expect(await human.link.get(link.userCode)).toMatchObject({
      agentName: 'sdk test agent',
      status: 'pending',
    });
    const waiting = link.wait({ pollIntervalMs: 100 });
    await human.link.approve(link.userCode);
    const token = await waiting;
    expect(token).toMatch(/^usr_/);

    // The token is handed out once: the request is consumed.
    await expect(link.poll()).rejects.toBeInstanceOf(GoneError);
    // And it identifies the agent to the human's dashboard.
    const linked = agent.withOptions({ userToken: token });
    const space = await linked.spaces.create({ name: 'From a linked agent', description: 'x' });
    expect((await human.spaces()).spaces.map((s) => s.spaceId)).toEqual([space.spaceId]);
  });

  it('keeps waiting for the human through polls that meet a restarting server (no answer, a 5xx)', async () => {
    // The first polls meet what a restarting server gives: a refused connection, a 502 from a
    // proxy in front of it, a 503 while its database is away.
    const failures = [
      () => {
        throw new TypeError('fetch failed', {
          cause: Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' }),
        });
      },
      () => new Response('<html>Bad Gateway</html>', { status: 502 }),
      () => new Response(JSON.stringify({ error: 'database unavailable' }), { status: 503 }),
    ];
    let polls = 0;
    const restarting: typeof fetch = async (input, init) => {
      if (String(input).endsWith('/link/poll') && polls < failures.length) return failures[polls++]!();
      return fetch(input, init);
    };
    // No retry inside a poll: each failure reaches the wait itself, as PendingJoin.wait's do.
    const link = await hub({ fetch: restarting, maxRetries: 0 }).link.start({ agentName: 'patient agent' });
    let ended: unknown;
    const disconnects: string[] = [];
    const reconnects: { attempts: number }[] = [];
    const hooks = {
      onDisconnect: ({ error, attempt }: { error: Error; attempt: number }) =>
        disconnects.push(`${attempt} ${error.name}`),
      onReconnect: (info: { attempts: number }) => reconnects.push(info),
    };
    const waiting = link.wait({ pollIntervalMs: 50, ...hooks }).then(
      (token) => token,
      (error: unknown) => {
        ended = error;
        return error;
      },
    );
    await until(() => {
      if (ended) throw ended; // the wait gave up on a poll it should have made again
      return polls === failures.length ? true : undefined;
    });
    const human = await hub().auth.signup(newAccount());
    await human.link.approve(link.userCode);
    expect(await waiting).toMatch(/^usr_/);
    expect(disconnects).toEqual(['1 ConnectionError', '2 InternalServerError', '3 ServiceUnavailableError']);
    expect(reconnects).toEqual([{ attempts: 3 }]);
  });

  it('throws LinkDeniedError when the human refuses', async () => {
    const link = await hub().link.start({ agentName: 'refused agent' });
    const human = await hub().auth.signup(newAccount());
    await human.link.deny(link.userCode);
    const error = await link.wait({ pollIntervalMs: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LinkDeniedError);
    // A code to branch on, as every error has (trial 51): the SDK's own, the server's answer being a 200.
    expect(error).toMatchObject({ code: 'link_denied', status: undefined });
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({ name: 'LinkDeniedError', code: 'link_denied' });
  });
});

describe('health and ask', () => {
  it('answers the health probe and searches the documentation', async () => {
    const client = hub();
    expect(await client.health()).toEqual({ status: 'ok' });
    const answer = await client.ask('how do I lock an artifact?');
    expect(answer.query).toBe('how do I lock an artifact?');
    expect(answer.results.length).toBeGreaterThan(0);
    expect(answer.results[0]?.url).toMatch(/^http/);
  });
});
