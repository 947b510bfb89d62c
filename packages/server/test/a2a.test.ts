import type { Message, Task } from '@a2a-js/sdk';
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { JOIN_KEY_WINDOW_MS, rowsOf, sweepCollectedJoinKeys } from '@convene/core';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { expectError, expectOk, Harness, type SpaceFixture, startTestServer, useServer } from './helpers';
import { WaitWatcher } from './helpers/waits';

const { srv, h } = useServer();

/** The official A2A client, sending `key` as X-Private-Key (the cards' apiKey scheme). */
async function a2aClient(cardUrl: string, key: string): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('X-Private-Key', key);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  return factory.createFromUrl(cardUrl, '');
}

const userMessage = (text: string, extra: Partial<Message> = {}): Message => ({
  kind: 'message',
  role: 'user',
  messageId: crypto.randomUUID(),
  parts: [{ kind: 'text', text }],
  ...extra,
});

const send = (space: SpaceFixture, key: string, body: Record<string, unknown>) =>
  h.post(`/hub/space/${space.spaceId}/messages`, { key, body });

describe('A2A agent cards', () => {
  it('serves the service card and a card per space', async () => {
    const card = await h.get('/.well-known/agent-card.json');
    expectOk(card);
    expect(card.body).toMatchObject({
      protocolVersion: '0.3.0',
      name: 'Convene',
      url: `${srv.url}/a2a`,
      preferredTransport: 'JSONRPC',
      capabilities: { streaming: true, pushNotifications: false },
      securitySchemes: { spaceKey: { type: 'apiKey', in: 'header', name: 'X-Private-Key' } },
      security: [{ spaceKey: [] }],
    });
    expect(card.body.skills.map((s: any) => s.id)).toEqual(['converse', 'join']);

    const space = await h.createSpace({
      name: 'Design review',
      description: 'Review the design',
      agenda: 'API',
    });
    const invitation = await h.invite(space);
    const spaceCard = await h.get(`/hub/space/${space.spaceId}/agent-card.json?key=${invitation}`);
    expectOk(spaceCard);
    expect(spaceCard.body).toMatchObject({
      name: 'Design review',
      description: 'Review the design\n\nAgenda: API',
      url: `${srv.url}/hub/space/${space.spaceId}/a2a`,
    });
    expectError(await h.get(`/hub/space/${space.spaceId}/agent-card.json`), 401);
    expectError(await h.get(`/hub/space/${space.spaceId}/agent-card.json?key=${'f'.repeat(64)}`), 401);
  });
});

describe('A2A JSON-RPC', () => {
  it('round trip: message/send posts into the space, the task completes with the answer', async () => {
    const space = await h.createSpace({ ownerName: 'Olga' });
    const agent = await h.joinActive(space, { name: 'Remote agent' });
    const earlier = await send(space, space.ownerKey, { content: 'earlier' });
    const client = await a2aClient(`${srv.url}/.well-known/agent-card.json`, agent.key);

    // Not blocking (the official client blocks by default): the task is answered as it stands.
    const task = (await client.sendMessage({
      message: userMessage('Is the build green?'),
      configuration: { blocking: false },
    })) as Task;
    expect(task).toMatchObject({ kind: 'task', contextId: space.spaceId, status: { state: 'working' } });
    const listed = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    expect(listed.body.messages.at(-1)).toEqual(
      expect.objectContaining({ id: task.id, senderId: agent.participantId, content: 'Is the build green?' }),
    );

    // Someone answers something else first (a reply to another message), then the question.
    await send(space, space.ownerKey, { content: 'aside', replyTo: earlier.body.messageId });
    expect((await client.getTask({ id: task.id })).status.state).toBe('working');
    const answer = await send(space, space.ownerKey, { content: 'Yes, all green', replyTo: task.id });
    const done = await client.getTask({ id: task.id });
    expect(done.status.state).toBe('completed');
    expect(done.status.message).toMatchObject({
      role: 'agent',
      messageId: answer.body.messageId,
      parts: [{ kind: 'text', text: 'Yes, all green' }],
      metadata: { senderName: 'Olga', replyTo: task.id },
    });
    expect(done.history?.map((m) => [m.role, (m.parts[0] as { text: string }).text])).toEqual([
      ['user', 'Is the build green?'],
      ['agent', 'aside'],
      ['agent', 'Yes, all green'],
    ]);

    // A message that answers nothing in particular answers the question before it.
    const next = (await client.sendMessage({
      message: userMessage('And the docs?'),
      configuration: { blocking: false },
    })) as Task;
    await send(space, space.ownerKey, { content: 'Also fine' });
    const plain = await client.getTask({ id: next.id });
    expect(plain.status).toMatchObject({ state: 'completed', message: { parts: [{ text: 'Also fine' }] } });
  });

  it('blocking message/send waits for the answer; message/stream streams until it comes', async () => {
    const space = await h.createSpace();
    const agent = await h.joinActive(space, { name: 'Streamer' });
    const client = await a2aClient(
      `${srv.url}/hub/space/${space.spaceId}/agent-card.json?key=${agent.key}`,
      agent.key,
    );

    const blocking = client.sendMessage({ message: userMessage('ping?'), configuration: { blocking: true } });
    const deadline = Date.now() + 10_000;
    let asked: any[] = [];
    while (asked.length === 0 && Date.now() < deadline) {
      asked = (await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey })).body.messages;
    }
    await send(space, space.ownerKey, { content: 'pong', replyTo: asked[0].id });
    const answered = (await blocking) as Task;
    expect(answered.status.state).toBe('completed');
    expect(answered.status.message?.parts).toEqual([{ kind: 'text', text: 'pong' }]);

    const events: any[] = [];
    const streaming = (async () => {
      for await (const event of client.sendMessageStream({ message: userMessage('anyone?') }))
        events.push(event);
    })();
    while (events.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    const streamTask = events[0] as Task;
    expect(streamTask).toMatchObject({ kind: 'task', status: { state: 'working' } });
    const side = await send(space, space.ownerKey, { content: 'side', replyTo: answered.id });
    expectOk(side);
    await send(space, space.ownerKey, { content: 'here', replyTo: streamTask.id });
    await streaming;
    expect(
      events.slice(1).map((e) => [e.kind, e.status.state, e.status.message.parts[0].text, e.final]),
    ).toEqual([
      ['status-update', 'working', 'side', false],
      ['status-update', 'completed', 'here', true],
    ]);
  });

  it('joins a private space as a task that completes on approval, with the key as its artifact', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const invitation = await h.invite(space);
    const client = await a2aClient(`${srv.url}/.well-known/agent-card.json`, invitation);
    const join = (await client.sendMessage({
      message: {
        kind: 'message',
        role: 'user',
        messageId: crypto.randomUUID(),
        parts: [{ kind: 'data', data: { name: 'A2A joiner', role: 'helper' } }],
      },
      configuration: { blocking: false },
    })) as Task;
    expect(join).toMatchObject({ kind: 'task', contextId: space.spaceId, status: { state: 'submitted' } });
    const participantId = join.metadata?.participantId as string;
    // The task id carries the join's pollToken: only the joiner can follow it.
    expect(join.id).toMatch(new RegExp(`^${participantId}\\.poll_`));
    expect((await client.getTask({ id: join.id })).status.state).toBe('submitted');
    await expect(client.getTask({ id: participantId })).rejects.toThrow(/task not found/i);
    await expect(client.getTask({ id: `${participantId}.poll_forged` })).rejects.toThrow(/task not found/i);

    const events: any[] = [];
    const following = (async () => {
      for await (const event of client.resubscribeTask({ id: join.id })) events.push(event);
    })();
    while (events.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${participantId}/approve`, {
        key: space.ownerKey,
      }),
    );
    await following;
    const artifact = events.find((e) => e.kind === 'artifact-update');
    const key = artifact.artifact.parts[0].data.participantPrivateKey;
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(events.at(-1)).toMatchObject({
      kind: 'status-update',
      status: { state: 'completed' },
      final: true,
    });
    // The key works; the task may be read again, with the key, while the joiner may collect it…
    expectOk(await h.get(`/hub/space/${space.spaceId}/messages`, { key }));
    const again = (await client.getTask({ id: join.id })) as any;
    expect(again.status.state).toBe('completed');
    expect(again.artifacts[0].parts[0].data.participantPrivateKey).toBe(key);
    // …and is gone once that is over.
    await sweepCollectedJoinKeys(
      srv.server.database.db,
      new Date(Date.now() + JOIN_KEY_WINDOW_MS + 1000),
      10_000,
    );
    await expect(client.getTask({ id: join.id })).rejects.toThrow(/task not found/i);

    // A public space admits at once.
    const open = await h.createSpace();
    const openClient = await a2aClient(`${srv.url}/.well-known/agent-card.json`, await h.invite(open));
    const admitted = (await openClient.sendMessage({
      message: {
        kind: 'message',
        role: 'user',
        messageId: crypto.randomUUID(),
        parts: [{ kind: 'data', data: { name: 'Quick' } }],
      },
    })) as Task;
    expect(admitted.status.state).toBe('completed');
    expect(admitted.artifacts?.[0]?.parts).toEqual([
      {
        kind: 'data',
        data: { participantId: admitted.id, participantPrivateKey: expect.stringMatching(/^[0-9a-f]{64}$/) },
      },
    ]);
  });

  it('a blocking join waits for the owner, who refuses it', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const client = await a2aClient(`${srv.url}/.well-known/agent-card.json`, await h.invite(space));
    const joining = client.sendMessage({
      message: {
        kind: 'message',
        role: 'user',
        messageId: 'm1',
        parts: [{ kind: 'data', data: { name: 'Nope' } }],
      },
      configuration: { blocking: true },
    });
    let waiting: any;
    while (!waiting) {
      const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
      waiting = view.body.participants.find((p: any) => p.status === 'waitingForApproval');
    }
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${waiting.participantId}/kick`, {
        key: space.ownerKey,
      }),
    );
    const join = (await joining) as Task;
    expect(join.id.startsWith(`${waiting.participantId}.`)).toBe(true);
    expect(join.status.state).toBe('rejected');
    expect((await client.getTask({ id: join.id })).status.state).toBe('rejected');
  });

  it('answers JSON-RPC errors for bad requests, and 401 without a working key', async () => {
    const space = await h.createSpace();
    const rpc = (body: unknown, key: string = space.ownerKey) => h.post('/a2a', { key, body });
    expectError(
      await h.post('/a2a', { body: { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'x' } } }),
      401,
    );
    expectError(
      await rpc({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'x' } }, 'f'.repeat(64)),
      401,
    );
    const other = await h.createSpace();
    expectError(
      await h.post(`/hub/space/${other.spaceId}/a2a`, {
        key: space.ownerKey,
        body: { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'x' } },
      }),
      401,
    );
    // Not JSON-RPC at all is HTTP's 400 {error} (as on /mcp); a path that is no space id, 404.
    expectError(await rpc({ hello: 1 }), 400);
    expectError(await rpc({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: ['x'] }), 400);
    expectError(
      await h.post('/hub/space/nope/a2a', {
        key: space.ownerKey,
        body: { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'x' } },
      }),
      404,
    );
    const cases: [unknown, number][] = [
      [{ jsonrpc: '2.0', id: 1, method: 'nope' }, -32601],
      [{ jsonrpc: '2.0', id: 1, method: 'message/send', params: {} }, -32602],
      [{ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: userMessage('') } }, -32602],
      [
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'message/send',
          params: { message: userMessage('x', { contextId: other.spaceId }) },
        },
        -32602,
      ],
      [{ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: crypto.randomUUID() } }, -32001],
      [{ jsonrpc: '2.0', id: 1, method: 'tasks/cancel', params: { id: crypto.randomUUID() } }, -32002],
      [{ jsonrpc: '2.0', id: 1, method: 'tasks/pushNotificationConfig/set', params: {} }, -32004],
    ];
    for (const [body, code] of cases) {
      const res = await rpc(body);
      expectOk(res);
      expect(res.body.error.code, JSON.stringify(res.body)).toBe(code);
    }
    // A muted participant's send is the REST 403, in `data`.
    const muted = await h.joinActive(space, { name: 'Muted' });
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${muted.participantId}/mute`, {
        key: space.ownerKey,
      }),
    );
    const refused = await rpc(
      { jsonrpc: '2.0', id: 7, method: 'message/send', params: { message: userMessage('hi') } },
      muted.key,
    );
    expect(refused.body).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32000,
        message: '403: muted participants cannot send messages',
        data: { error: 'muted participants cannot send messages', code: 'participant_muted', status: 403 },
      },
    });
  });
});

describe('A2A blocking waits cut off by the server closing', () => {
  it('answer the task as it stands (200), not shutting_down: the message was posted, the join made, once', async () => {
    const node = await startTestServer();
    const watcher = new WaitWatcher(node);
    const other = new Harness(node.url);
    const space = await other.createSpace({ privacy: 'private' });
    const agent = await other.joinActive(space, { name: 'Asker' });
    const invitation = await other.invite(space);
    const rpc = (key: string, message: Record<string, unknown>) =>
      fetch(`${node.url}/hub/space/${space.spaceId}/a2a`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Private-Key': key },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'message/send',
          params: {
            message: { kind: 'message', role: 'user', messageId: crypto.randomUUID(), ...message },
            configuration: { blocking: true },
          },
        }),
      });
    const sending = rpc(agent.key, { parts: [{ kind: 'text', text: 'anyone there?' }] });
    const joining = rpc(invitation, { parts: [{ kind: 'data', data: { name: 'Late joiner' } }] });
    await watcher.waiting(space.spaceId, 2);
    // The database outlives the answers, so that the test can count what was written.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const closeDatabase = node.server.database.close.bind(node.server.database);
    node.server.database.close = async () => {
      await held;
      await closeDatabase();
    };
    const started = Date.now();
    const closing = node.close();
    try {
      const [sent, joined] = await Promise.all([sending, joining]);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(sent.status).toBe(200);
      const sentBody: any = await sent.json();
      expect(sentBody.error).toBeUndefined();
      expect(sentBody.result).toMatchObject({
        kind: 'task',
        contextId: space.spaceId,
        status: { state: 'working' },
      });
      expect(joined.status).toBe(200);
      const joinedBody: any = await joined.json();
      expect(joinedBody.error).toBeUndefined();
      expect(joinedBody.result).toMatchObject({ kind: 'task', status: { state: 'submitted' } });
      expect(joinedBody.result.id).toContain('.');

      const { db } = node.server.database;
      const messages = rowsOf<{ id: string }>(
        await db.execute(
          sql`select id from messages where space_id = ${space.spaceId} and content = 'anyone there?'`,
        ),
      );
      expect(messages.map((m) => m.id)).toEqual([sentBody.result.id]);
      const joins = rowsOf<{ id: string }>(
        await db.execute(
          sql`select id from participants where space_id = ${space.spaceId} and name = 'Late joiner'`,
        ),
      );
      expect(joins.map((p) => p.id)).toEqual([joinedBody.result.id.split('.')[0]]);
    } finally {
      release();
      await closing;
    }
  });
});

describe('an A2A stream whose caller is removed', () => {
  it('ends with the refusal REST would give (401 in data), not an internal error', async () => {
    const space = await h.createSpace();
    const member = await h.joinActive(space, { name: 'Leaving' });
    const asked = await h.post(`/hub/space/${space.spaceId}/messages`, {
      key: member.key,
      body: { content: 'who answers?' },
    });
    expectOk(asked);
    const controller = new AbortController();
    const res = await fetch(`${srv.listenUrl}/hub/space/${space.spaceId}/a2a`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Private-Key': member.key,
        Accept: 'text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tasks/resubscribe',
        params: { id: asked.body.messageId },
      }),
      signal: controller.signal,
    });
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const text = res.text();
    try {
      expectOk(
        await h.post(`/hub/space/${space.spaceId}/participants/${member.participantId}/kick`, {
          key: space.ownerKey,
        }),
      );
      await h.post(`/hub/space/${space.spaceId}/messages`, {
        key: space.ownerKey,
        body: { content: 'gone' },
      });
      const events = (await text)
        .split('\n\n')
        .filter((frame) => frame.startsWith('data: '))
        .map((frame) => JSON.parse(frame.slice(6)));
      const last = events.at(-1);
      expect(last).toMatchObject({ id: 7, error: { code: -32000, data: { status: 401 } } });
      expect(last.error.message).toMatch(/^401: /);
    } finally {
      controller.abort();
    }
  });
});
