import { randomUUID } from 'node:crypto';
import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  ConnectionError,
  Convene,
  ConveneError,
  type DisconnectInfo,
  type MessageStream,
  type ReconnectInfo,
  type StreamEvent,
  TimeoutError,
} from '../src';
import { hub, ownedSpace, participant, serverUrl, until } from './helpers';
import { freezingProxy } from './helpers/proxy';
import { type RunningServer, startServer } from './helpers/server';

/**
 * Reads `stream` in the background into `events`; `done` settles when the loop ends (with its
 * error, if any). A stuck test fails on its `until` instead of hanging.
 */
function reader(stream: MessageStream) {
  const events: StreamEvent[] = [];
  const done = (async () => {
    for await (const event of stream) events.push(event);
  })();
  done.catch(() => {});
  return { events, done };
}

const messages = (events: StreamEvent[]) =>
  events.flatMap((event) => (event.event === 'message' ? [event.data.content] : []));

describe('the event stream', () => {
  it('delivers typed events: the backlog, context, then live events with increasing ids', async () => {
    const { owner } = await ownedSpace();
    await owner.messages.send('before');
    const me = await participant(owner);
    const controller = new AbortController();
    const { events, done } = reader(me.messages.stream({ signal: controller.signal }));

    await until(() => (events.some((e) => e.event === 'context') ? true : undefined));
    await owner.messages.send('live');
    const doc = await owner.artifacts.create({ name: 'doc', content: 'x' });
    await owner.artifacts.lock(doc.id);
    await until(() => (events.some((e) => e.event === 'artifact-locked') ? true : undefined));
    controller.abort();
    await done; // an abort ends the loop without an error

    expect(events[0]).toMatchObject({ event: 'message', data: { content: 'before', isOwner: true } });
    const context = events.find((e) => e.event === 'context');
    expect(context?.id).toBeUndefined();
    if (context?.event === 'context') expect(context.data.participants.length).toBe(2);
    expect(messages(events)).toEqual(['before', 'live']);
    const kinds = events.map((e) => e.event);
    expect(kinds).toEqual(expect.arrayContaining(['artifact-created', 'artifact-locked']));
    const created = events.find((e) => e.event === 'artifact-created');
    if (created?.event === 'artifact-created') expect(created.data).toMatchObject({ id: doc.id, version: 1 });
    const ids = events.flatMap((e) => (e.id === undefined ? [] : [e.id]));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('replays only what follows `since`, and resumes after `lastEventId` with nothing twice', async () => {
    const { owner } = await ownedSpace();
    await owner.messages.send('old');
    const cursor = (await owner.messages.list()).cursor;
    await owner.messages.send('new 1');
    await owner.messages.send('new 2');

    const first = owner.messages.stream({ since: cursor });
    const seen: StreamEvent[] = [];
    for await (const event of first) {
      seen.push(event);
      if (event.event === 'message' && event.data.content === 'new 1') break;
    }
    expect(messages(seen)).toEqual(['new 1']);
    await owner.messages.send('new 3');

    const controller = new AbortController();
    const { events, done } = reader(
      owner.messages.stream({ lastEventId: first.lastEventId, signal: controller.signal }),
    );
    await until(() => (messages(events).includes('new 3') ? true : undefined));
    controller.abort();
    await done;
    expect(messages(events)).toEqual(['new 2', 'new 3']);
  });

  it('return() while next() waits closes the connection at once: 25 left that way, the key still opens streams (20 at most)', async () => {
    const { owner } = await ownedSpace();
    for (let i = 0; i < 25; i++) {
      const stream = owner.messages.stream();
      const events = stream[Symbol.asyncIterator]();
      // The context, once the (empty) backlog is replayed: the stream is live.
      expect((await events.next()).value).toMatchObject({ event: 'context' });
      const waiting = events.next();
      // What a timeout or a race does with a stream it no longer wants.
      const started = Date.now();
      await events.return?.(undefined);
      expect(await waiting).toEqual({ done: true, value: undefined });
      expect(Date.now() - started).toBeLessThan(5_000);
      // Left by its loop, not ended by itself.
      expect(stream.ended).toBeUndefined();
    }
    const controller = new AbortController();
    const { events, done } = reader(owner.messages.stream({ signal: controller.signal }));
    await owner.messages.send('still heard');
    await until(() => (messages(events).includes('still heard') ? true : undefined));
    controller.abort();
    await done;
  });

  it('ends after space-closed', async () => {
    const { owner } = await ownedSpace();
    const me = await participant(owner);
    const { events, done } = reader(me.messages.stream());
    await until(() => (events.length > 0 ? true : undefined));
    // A signal the application keeps for its whole life: an ended stream stops listening to it.
    const lifetime = new AbortController();
    const stream = me.messages.stream({ signal: lifetime.signal });
    const { events: closing, done: closed } = reader(stream);
    await until(() => (closing.length > 0 ? true : undefined));
    expect(getEventListeners(lifetime.signal, 'abort').length).toBeGreaterThan(0);
    await owner.close();
    await done;
    await closed;
    expect(events.at(-1)).toMatchObject({ event: 'space-closed', data: { reason: 'closed' } });
    // Why it ended, after the loop.
    expect(stream.ended).toEqual({ reason: 'closed' });
    expect(getEventListeners(lifetime.signal, 'abort')).toEqual([]);
  });

  it('ends without an error once a kicked participant reconnects and its key is refused', async () => {
    const { owner } = await ownedSpace();
    const me = await participant(owner);
    // Made from the key alone, the client does not know which participant is kicked.
    const stream = hub().space(me.spaceId, me.key).messages.stream();
    const { events, done } = reader(stream);
    expect(stream.ended).toBeUndefined();
    await until(() => (events.length > 0 ? true : undefined));
    await owner.participants.kick(me.participantId!);
    await done;
    expect(events.at(-1)).toMatchObject({
      event: 'participant-status',
      data: { participantId: me.participantId, status: 'kicked' },
    });
    // Said by the refusal's code, as a client that knows its participantId says it from the event.
    expect(stream.ended?.reason).toBe('kicked');
    expect(stream.ended?.error).toBeInstanceOf(AuthenticationError);
    expect(stream.ended?.error?.code).toBe('participant_removed');
    expect(stream.ended?.error?.message).toContain('removed from this space');
  });

  it('ends right after its own participant is kicked or leaves, without reporting a lost connection', async () => {
    const { owner } = await ownedSpace();
    for (const end of ['kick', 'leave'] as const) {
      let connections = 0;
      const counting: typeof fetch = async (input, init) => {
        if (String(input).includes('/messages/stream')) connections++;
        return fetch(input, init);
      };
      const me = await participant(owner, `Ends by ${end}`, hub({ fetch: counting }));
      const disconnects: DisconnectInfo[] = [];
      const stream = me.messages.stream({ onDisconnect: (info) => disconnects.push(info) });
      const { events, done } = reader(stream);
      await until(() => (events.length > 0 ? true : undefined));
      if (end === 'kick') await owner.participants.kick(me.participantId!);
      else await me.leave();
      await done;
      expect(stream.ended).toEqual({ reason: end === 'kick' ? 'kicked' : 'left' });
      expect(events.at(-1)).toMatchObject({
        event: 'participant-status',
        data: { participantId: me.participantId, status: end === 'kick' ? 'kicked' : 'left' },
      });
      // The end of its membership is no dropped connection: no hook, no reconnection attempt.
      expect(disconnects).toEqual([]);
      expect(connections).toBe(1);
    }
  });

  it('is read once: a second loop over the same stream throws a ConveneError', async () => {
    const { owner } = await ownedSpace();
    const controller = new AbortController();
    const stream = owner.messages.stream({ signal: controller.signal });
    const { events, done } = reader(stream);
    await until(() => (events.length > 0 ? true : undefined));
    expect(() => stream[Symbol.asyncIterator]()).toThrow(ConveneError);
    expect(() => stream[Symbol.asyncIterator]()).toThrow(/iterated once/);
    controller.abort();
    await done;
  });

  it('warns of an idleTimeoutMs that the server’s 15 s ping cannot satisfy', async () => {
    const { owner, spaceId } = await ownedSpace();
    const warned: string[] = [];
    const client = new Convene({
      baseUrl: serverUrl(),
      logger: { debug() {}, info() {}, warn: (line: string) => warned.push(line), error() {} },
    }).space(spaceId, owner.key);
    for (const idleTimeoutMs of [5_000, undefined]) {
      const controller = new AbortController();
      const { events, done } = reader(client.messages.stream({ idleTimeoutMs, signal: controller.signal }));
      await until(() => (events.some((e) => e.event === 'context') ? true : undefined));
      controller.abort();
      await done;
    }
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain("idleTimeoutMs 5000 is not above the server's 15 s ping");
  });

  it('never counts a stream silent with an idleTimeoutMs of Infinity, nor times its connection out with a timeoutMs of Infinity', async () => {
    const { owner } = await ownedSpace();
    const disconnects: DisconnectInfo[] = [];
    const controller = new AbortController();
    const { events, done } = reader(
      owner.messages.stream({
        idleTimeoutMs: Number.POSITIVE_INFINITY,
        timeoutMs: Number.POSITIVE_INFINITY,
        signal: controller.signal,
        onDisconnect: (info) => disconnects.push(info),
      }),
    );
    await until(() => (events.some((e) => e.event === 'context') ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 500));
    await owner.messages.send('still here');
    await until(() => (messages(events).includes('still here') ? true : undefined));
    controller.abort();
    await done;
    // Node fired both timers at once: the stream was replaced again and again.
    expect(disconnects).toEqual([]);
  });

  it('throws the error of the first connection', async () => {
    const { spaceId } = await ownedSpace();
    const stream = hub().space(spaceId, 'f'.repeat(64)).messages.stream();
    await expect(reader(stream).done).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('gives up on a server that is down after the client’s retries, not its reconnections', async () => {
    let attempts = 0;
    const logged: string[] = [];
    const down = new Convene({
      baseUrl: 'http://127.0.0.1:9',
      logger: { debug() {}, info: (line: string) => logged.push(line), warn() {}, error() {} },
      logLevel: 'info',
      maxRetries: 1,
      fetch: async () => {
        attempts++;
        throw failure;
      },
    });
    const failure = new TypeError('fetch failed');
    const disconnects: DisconnectInfo[] = [];
    const spaceId = randomUUID();
    const stream = down.space(spaceId, 'f'.repeat(64)).messages.stream({
      maxReconnects: 30,
      onDisconnect: (info) => disconnects.push(info),
    });
    const error = await reader(stream).done.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    // Named as any request that got no answer: the operation and the URL it was sent to.
    const url = `http://127.0.0.1:9/hub/space/${spaceId}/messages/stream`;
    expect(error).toMatchObject({
      message: `the stream could not connect: fetch failed (streamMessages: GET ${url})`,
      operation: 'streamMessages',
      method: 'GET',
      url,
    });
    // Its cause is fetch's own error, as any call's (trial 51: the stream's copy had lost it).
    expect((error as ConnectionError).cause).toBe(failure);
    expect(attempts).toBe(2);
    // Its one retry is logged as any call's retry (the first connection is a call), not a
    // reconnection.
    expect(logged).toEqual([
      expect.stringMatching(
        /^\[convene\] fetch failed \(streamMessages: GET [^ ]+\); retrying in \d+ ms \(retry 1 of 1\)$/,
      ),
    ]);
    // A stream that never connected was never disconnected: its error is thrown instead.
    expect(disconnects).toEqual([]);
  });

  it('throws a first connection that times out as a TimeoutError, with its cause', async () => {
    const silent = new Convene({
      baseUrl: 'http://127.0.0.1:9',
      maxRetries: 0,
      timeoutMs: 50,
      fetch: (_, init) =>
        new Promise((_, reject) =>
          init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)),
        ),
    });
    const error = await reader(silent.space(randomUUID(), 'f'.repeat(64)).messages.stream()).done.catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({
      message: expect.stringMatching(/^the stream got no answer within 50 ms /),
    });
    expect((error as TimeoutError).cause).toMatchObject({ name: 'AbortError' });
  });

  it('replaces a connection that falls silent, and resumes where it was', async () => {
    const { owner, spaceId } = await ownedSpace();
    const proxy = await freezingProxy(serverUrl());
    try {
      const viaProxy = new Convene({ baseUrl: proxy.url, logLevel: 'off' }).space(spaceId, owner.key);
      const controller = new AbortController();
      const disconnects: DisconnectInfo[] = [];
      const reconnects: ReconnectInfo[] = [];
      const { events, done } = reader(
        viaProxy.messages.stream({
          idleTimeoutMs: 1500,
          signal: controller.signal,
          onDisconnect: (info) => disconnects.push(info),
          onReconnect: (info) => reconnects.push(info),
        }),
      );
      await owner.messages.send('m1');
      await until(() => (messages(events).includes('m1') ? true : undefined));
      proxy.freeze();
      // Sent while the connection is frozen: only a new connection can bring it.
      await owner.messages.send('m2');
      await until(() => (messages(events).includes('m2') ? true : undefined));
      controller.abort();
      await done;
      expect(messages(events)).toEqual(['m1', 'm2']);
      expect(proxy.connections).toBeGreaterThanOrEqual(2);
      // Told that it lost the connection to silence, then that it was back after m1.
      expect(disconnects[0]).toMatchObject({ attempt: 1, delayMs: expect.any(Number) });
      expect(disconnects[0]!.error).toBeInstanceOf(TimeoutError);
      const m1 = events.find((e) => e.event === 'message' && e.data.content === 'm1');
      expect(reconnects[0]).toEqual({ attempts: 1, lastEventId: m1!.id });
    } finally {
      await proxy.close();
    }
  });
  it('resumes a `since` stream from where it began, not replaying the events before it', async () => {
    const { owner, spaceId } = await ownedSpace();
    await owner.messages.send('before');
    const { cursor } = await owner.messages.list();
    await owner.messages.send('marker');
    // After the last message the replay holds, before the stream opens: not the stream's to tell.
    const early = await participant(owner, 'Early');
    const proxy = await freezingProxy(serverUrl());
    try {
      const viaProxy = new Convene({ baseUrl: proxy.url, logLevel: 'off' }).space(spaceId, owner.key);
      const controller = new AbortController();
      const reconnects: ReconnectInfo[] = [];
      const { events, done } = reader(
        viaProxy.messages.stream({
          since: cursor,
          idleTimeoutMs: 1500,
          signal: controller.signal,
          onReconnect: (info) => reconnects.push(info),
        }),
      );
      await until(() => (events.some((e) => e.event === 'context') ? true : undefined));
      const context = events.find((e) => e.event === 'context');
      proxy.freeze();
      // While frozen, before any event with an id came live: a new connection brings it.
      await owner.messages.send('during');
      await until(() => (messages(events).includes('during') ? true : undefined));
      controller.abort();
      await done;
      expect(messages(events)).toEqual(['marker', 'during']);
      // The join of before the stream began is not replayed as if it had just happened.
      expect(events.filter((e) => e.event === 'participant-status')).toEqual([]);
      expect(context?.event === 'context' && context.data.lastEventId).toBeGreaterThan(
        events.find((e) => e.event === 'message')!.id!,
      );
      expect(context?.event === 'context' && context.data.participants.map((p) => p.participantId)).toContain(
        early.participantId,
      );
      expect(reconnects[0]).toMatchObject({
        lastEventId: context?.event === 'context' ? context.data.lastEventId : -1,
      });
    } finally {
      await proxy.close();
    }
  });
});

describe('the event stream across a server restart', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server?.close());

  it('reconnects with Last-Event-ID and sees every event exactly once, in order', async () => {
    const logged: string[] = [];
    const logger = { debug() {}, info: (line: string) => logged.push(line), warn() {}, error() {} };
    const client = new Convene({ baseUrl: server.url, logger, logLevel: 'info', maxRetries: 5 });
    const space = await client.spaces.create({ name: 'restart', description: 'x' });
    const owner = client.space(space.spaceId, space.ownerPrivateKey, space.ownerId);
    const invitation = await owner.invitations.create();
    const me = await client.join(invitation.agentLink, { name: 'Reader' });

    const controller = new AbortController();
    let reconnections = 0;
    // What the hooks were told, in order: `lost 1 ConnectionError`, `lost 2 …`, `back after 2`.
    const told: string[] = [];
    const { events, done } = reader(
      me.messages.stream({
        signal: controller.signal,
        maxReconnects: 30,
        onDisconnect: ({ error, attempt }) => told.push(`lost ${attempt} ${error.name}`),
        onReconnect: ({ attempts }) => {
          reconnections++;
          told.push(`back after ${attempts}`);
        },
      }),
    );
    for (let i = 1; i <= 5; i++) await owner.messages.send(`m${i}`);
    await until(() => (messages(events).includes('m5') ? true : undefined));
    // A change's context event is no reconnection.
    const before = await owner.artifacts.create({ name: 'before the restart' });
    await until(() => (events.filter((e) => e.event === 'context').length >= 2 ? true : undefined));
    expect(reconnections).toBe(0);

    await server.restart();
    // Written before the reader is back (it is still backing off): replayed from its Last-Event-ID.
    for (let i = 6; i <= 10; i++) await owner.messages.send(`m${i}`);
    const doc = await owner.artifacts.create({ name: 'after the restart' });
    await until(
      () =>
        messages(events).includes('m10') &&
        events.some((e) => e.event === 'artifact-created' && (e.data as { id: string }).id === doc.id)
          ? true
          : undefined,
      60_000,
    );
    await owner.messages.send('m11');
    await until(() => (messages(events).includes('m11') ? true : undefined), 30_000);
    controller.abort();
    await done;

    expect(messages(events)).toEqual(Array.from({ length: 11 }, (_, i) => `m${i + 1}`));
    // It did reconnect, from the id of the last event it had, and said so.
    expect(
      logged.some((line) =>
        /: (the server ended the stream|the stream was cut: .+); resuming after event \d+$/.test(line),
      ),
    ).toBe(true);
    // A failed attempt to come back is logged as a reconnection, with when the stream would give up.
    for (const line of logged.filter((line) => line.includes('could not connect')))
      expect(line).toMatch(/; reconnecting in \d+ ms \(failure \d+; giving up after 600 s or 30 attempts\)$/);
    expect(reconnections).toBeGreaterThanOrEqual(1);
    // Each loss is told before its reconnection, attempt by attempt; the first by why it was lost.
    expect(told[0]).toMatch(/^lost 1 ConnectionError$/);
    let expected = 1;
    for (const line of told) {
      if (line.startsWith('lost')) expect(line).toMatch(new RegExp(`^lost ${expected++} \\w*Error$`));
      else {
        expect(line).toBe(`back after ${expected - 1}`);
        expected = 1;
      }
    }
    expect(told.at(-1)).toMatch(/^back after \d+$/);
    const ids = events.flatMap((e) => (e.id === undefined ? [] : [e.id]));
    expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
    expect(
      events.filter((e) => e.event === 'artifact-created').map((e) => (e.data as { id: string }).id),
    ).toEqual([before.id, doc.id]);
  }, 120_000);
});
