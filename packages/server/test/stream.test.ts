import { connect } from 'node:net';
import { type EventBus, OffsetClock, schema } from '@convene/core';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { expectError, expectOk, onPostgres, type SpaceFixture, useServer, withServer } from './helpers';
import { type SseEvent, SseStream } from './helpers/sse';

const clock = new OffsetClock();

const { srv, h } = useServer({
  clock,
  config: { streamPingMs: 200, presenceIntervalMs: 100, presenceHeldMs: 200 },
});

const send = async (space: { spaceId: string }, key: string, content: string, type = 'text') => {
  const res = await h.post(`/hub/space/${space.spaceId}/messages`, { key, body: { content, type } });
  expectOk(res);
  return res.body.messageId as string;
};
const ownerPost = (space: SpaceFixture, path: string) =>
  h.post(`/hub/space/${space.spaceId}${path}`, { key: space.ownerKey });
const kinds = (events: SseEvent[]) => events.map((e) => e.event);
const ids = (events: SseEvent[]) => events.map((e) => (e.id === undefined ? undefined : Number(e.id)));

async function openStream(space: SpaceFixture, options: Parameters<typeof SseStream.connect>[2] = {}) {
  const stream = await SseStream.connect(srv.url, space.spaceId, { key: space.ownerKey, ...options });
  return stream;
}

describe('streamMessages: opening', () => {
  it('answers an event stream with the policy headers, the backlog, then a context', async () => {
    const space = await h.createSpace();
    const m1 = await send(space, space.ownerKey, 'one');
    const m2 = await send(space, space.ownerKey, 'two');
    const stream = await openStream(space);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.headers.get('cache-control')).toBe('no-cache');
    expect(stream.headers.get('x-accel-buffering')).toBe('no');
    expect(stream.headers.get('api-version')).toBe('1');
    expect(stream.headers.get('ratelimit-limit')).toMatch(/^\d+$/);
    expect(stream.headers.get('ratelimit-policy')).toMatch(/;w=\d+$/);
    const [e1, e2, context] = await stream.take(3);
    expect([e1, e2].map((e) => [e!.id, e!.event, e!.json.id, e!.json.content, e!.json.seq])).toEqual([
      ['1', 'message', m1, 'one', 1],
      ['2', 'message', m2, 'two', 2],
    ]);
    expect(e1!.json).toEqual({
      id: m1,
      senderId: space.ownerId,
      senderName: 'Owner',
      isOwner: true,
      content: 'one',
      type: 'text',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      seq: 1,
      mentions: [],
    });
    expect(context!.event).toBe('context');
    expect(context!.id).toBeUndefined();
    expect(context!.json).toEqual({
      participants: [
        expect.objectContaining({ participantId: space.ownerId, isOwner: true, status: 'active' }),
      ],
      artifacts: [],
      suggestedPollingIntervalMs: 2000,
      // Where the stream stands: after the two messages.
      lastEventId: 2,
    });

    const m3 = await send(space, space.ownerKey, 'three');
    const live = await stream.next();
    expect([live.id, live.event, live.json.id, live.json.seq]).toEqual(['3', 'message', m3, 3]);
    stream.close();
  });

  it('accepts the key in ?key= and replays only the messages after ?timestamp', async () => {
    const space = await h.createSpace();
    await send(space, space.ownerKey, 'old');
    const list = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    await send(space, space.ownerKey, 'new');
    const stream = await SseStream.connect(srv.url, space.spaceId, {
      queryKey: space.ownerKey,
      timestamp: list.body.cursor,
    });
    const events = await stream.take(2);
    expect(events.map((e) => [e.event, e.json.content])).toEqual([
      ['message', 'new'],
      ['context', undefined],
    ]);
    stream.close();
    // An empty ?timestamp= is none, as listMessages takes it: every message again.
    const whole = await SseStream.connect(srv.url, space.spaceId, {
      queryKey: space.ownerKey,
      timestamp: '',
    });
    expect(whole.status).toBe(200);
    expect((await whole.take(3)).map((e) => [e.event, e.json.content])).toEqual([
      ['message', 'old'],
      ['message', 'new'],
      ['context', undefined],
    ]);
    expect(
      (await h.get(`/hub/space/${space.spaceId}/messages?timestamp=`, { key: space.ownerKey })).status,
    ).toBe(200);
    whole.close();
  });

  it('says in its first context where it stands, past events the timestamp replay leaves out', async () => {
    const space = await h.createSpace();
    await send(space, space.ownerKey, 'before');
    const { body: listed } = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    await send(space, space.ownerKey, 'marker');
    // Events after the last message replayed, and before the stream opens: not replayed.
    const joined = await h.joinActive(space);
    const stream = await SseStream.connect(srv.url, space.spaceId, {
      key: space.ownerKey,
      timestamp: listed.cursor,
    });
    const [marker, context] = await stream.take(2);
    expect([marker!.id, marker!.json.content]).toEqual(['2', 'marker']);
    expect(context!.event).toBe('context');
    expect(context!.json.participants.map((p: any) => p.participantId)).toContain(joined.participantId);
    // The join is event 3: a client resuming from the context starts after it, not after 2.
    expect(context!.json.lastEventId).toBe(3);
    // Each later context says the event it follows.
    await send(space, space.ownerKey, 'live');
    expectOk(await ownerPost(space, `/participants/${joined.participantId}/mute`));
    const later = (await stream.until((e) => e.event === 'context')).at(-1)!;
    expect(later.json.lastEventId).toBe(5);
    stream.close();
  });

  it('lets muted participants listen', async () => {
    const space = await h.createSpace();
    const p = await h.joinActive(space);
    expectOk(await ownerPost(space, `/participants/${p.participantId}/mute`));
    const stream = await SseStream.connect(srv.url, space.spaceId, { key: p.key });
    await stream.until((e) => e.event === 'context');
    await send(space, space.ownerKey, 'you can read this');
    expect((await stream.next()).json.content).toBe('you can read this');
    stream.close();
  });

  it('answers HEAD with the stream headers and no body', async () => {
    const space = await h.createSpace();
    const res = await fetch(`${srv.url}/hub/space/${space.spaceId}/messages/stream`, {
      method: 'HEAD',
      headers: { 'X-Private-Key': space.ownerKey },
      signal: AbortSignal.timeout(3000),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await res.text()).toBe('');
  });

  it('frames its body as HTTP/1.1 chunks, and as the frames alone to an HTTP/1.0 client', async () => {
    const space = await h.createSpace();
    await send(space, space.ownerKey, 'on the wire');
    const { port } = new URL(srv.url);
    /** The raw answer to a request of that HTTP version, once it holds the first context. */
    const rawAnswer = (version: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () =>
          socket.write(
            `GET /hub/space/${space.spaceId}/messages/stream ${version}\r\nHost: 127.0.0.1\r\n` +
              `X-Private-Key: ${space.ownerKey}\r\nAccept: text/event-stream\r\n\r\n`,
          ),
        );
        let text = '';
        socket.setEncoding('latin1');
        socket.on('data', (chunk: string) => {
          text += chunk;
          // Up to the end of the first context (and of its chunk, over HTTP/1.1).
          const context = text.indexOf('event: context\n');
          const end = context < 0 ? -1 : text.indexOf(version === 'HTTP/1.0' ? '\n\n' : '\n\n\r\n', context);
          if (end >= 0) {
            socket.destroy();
            resolve(text.slice(0, end + (version === 'HTTP/1.0' ? 2 : 4)));
          }
        });
        socket.on('error', reject);
        setTimeout(() => reject(new Error(`no context after 5 s: ${JSON.stringify(text)}`)), 5000).unref();
      });
    // Pings (every 200 ms here) may come between the frames.
    const withoutPings = (frames: string[]) => frames.filter((frame) => frame !== ': ping\n\n');

    const chunked = await rawAnswer('HTTP/1.1');
    const [head11] = chunked.split('\r\n\r\n', 1) as [string];
    expect(head11).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(head11.toLowerCase()).toContain('transfer-encoding: chunked');
    // Each frame is one chunk: its size in hex, CRLF, the frame, CRLF.
    const chunks: string[] = [];
    for (let rest = chunked.slice(head11.length + 4); rest.length > 0; ) {
      const size = /^([0-9a-f]+)\r\n/.exec(rest);
      expect(size, `a chunk size at ${JSON.stringify(rest.slice(0, 40))}`).not.toBeNull();
      const start = size![0].length;
      const length = Number.parseInt(size![1]!, 16);
      chunks.push(rest.slice(start, start + length));
      expect(rest.slice(start + length, start + length + 2)).toBe('\r\n');
      rest = rest.slice(start + length + 2);
    }
    const [message, context] = withoutPings(chunks);
    expect(message).toMatch(/^id: 1\nevent: message\ndata: \{.*"content":"on the wire".*\}\n\n$/);
    expect(context).toMatch(/^event: context\ndata: \{.*\}\n\n$/);
    expect(withoutPings(chunks)).toHaveLength(2);

    const plain = await rawAnswer('HTTP/1.0');
    const [head10, body10] = plain.split('\r\n\r\n', 2) as [string, string];
    expect(head10).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(head10.toLowerCase()).not.toContain('transfer-encoding');
    // The same frames, one after the other (the context's lastSeenAt aside: the owner was seen
    // again meanwhile).
    const unseen = (text: string) => text.replace(/"lastSeenAt":"[^"]*"/g, '"lastSeenAt":…');
    expect(unseen(withoutPings(body10.split(/(?<=\n\n)/)).join(''))).toBe(unseen(message! + context!));
  });

  it('keeps its frames for a request pipelined behind a long poll until the poll has answered', async () => {
    const space = await h.createSpace();
    const { port } = new URL(srv.url);
    const headers = `Host: 127.0.0.1\r\nX-Private-Key: ${space.ownerKey}\r\n`;
    // Both requests in one write: the stream's answer must wait for the poll's, on the same connection.
    const socket = connect(Number(port), '127.0.0.1', () =>
      socket.write(
        `GET /hub/space/${space.spaceId}/messages?wait=1 HTTP/1.1\r\n${headers}\r\n` +
          `GET /hub/space/${space.spaceId}/messages/stream HTTP/1.1\r\n${headers}Accept: text/event-stream\r\n\r\n`,
      ),
    );
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    try {
      // The stream is authorised and writes its context while the poll still waits.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(text).toBe('');
      const deadline = Date.now() + 5000;
      while (!text.includes('"lastEventId":0}\n\n\r\n') && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      const [poll, stream] = text.split(/(?=HTTP\/1\.1 )/) as [string, string];
      expect(poll).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*"messages":\[\]/);
      expect(stream).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*transfer-encoding: chunked\r\n/i);
      // The body, its chunks joined: the first context, whole, then pings (every 200 ms here).
      const body = stream.slice(stream.indexOf('\r\n\r\n') + 4).replace(/(^|\r\n)[0-9a-f]+\r\n/g, '');
      expect(body).toMatch(
        /^event: context\ndata: \{"participants":\[.*\],"artifacts":\[\],.*"lastEventId":0\}\n\n(: ping\n\n)*\r\n$/,
      );
    } finally {
      socket.destroy();
    }
  });

  it('sends a ping comment every streamPingMs', async () => {
    const space = await h.createSpace();
    const stream = await openStream(space);
    await stream.waitUntil(() => stream.comments.filter((c) => c === 'ping').length >= 2, 3000, 'two pings');
    stream.close();
  });

  it('keeps its participant seen while it is open (every presenceHeldMs), not only when it opens', async () => {
    const space = await h.createSpace();
    const guest = await h.joinActive(space, { name: 'Listener' });
    const lastSeen = async () => {
      const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
      const listener = view.body.participants.find((p: any) => p.participantId === guest.participantId);
      return Date.parse(listener.lastSeenAt);
    };
    const stream = await SseStream.connect(srv.url, space.spaceId, { key: guest.key });
    try {
      await stream.until((e) => e.event === 'context');
      const opened = await lastSeen();
      clock.advance(60_000);
      try {
        const pings = () => stream.comments.filter((c) => c === 'ping').length;
        const before = pings();
        // Two pings' time (200 ms each): a round of the held keys (200 ms) came meanwhile.
        await stream.waitUntil(() => pings() >= before + 2, 3000, 'two more pings');
        expect(await lastSeen()).toBeGreaterThanOrEqual(opened + 60_000);
      } finally {
        clock.advance(-60_000);
      }
    } finally {
      stream.close();
    }
  });

  it('answers JSON errors before the stream starts: 401, 404, 400', async () => {
    const space = await h.createSpace();
    const other = await h.createSpace();
    const invitation = await h.invite(space);
    const kicked = await h.joinActive(space);
    expectOk(await ownerPost(space, `/participants/${kicked.participantId}/kick`));
    const expectStreamError = async (
      options: Parameters<typeof SseStream.open>[2],
      status: number,
      id = space.spaceId,
    ) => {
      const res = await SseStream.open(srv.url, id, options);
      expect(res).not.toBeInstanceOf(SseStream);
      const answer = res as Exclude<typeof res, SseStream>;
      expectError({ ...answer, text: answer.text }, status);
      return JSON.parse(answer.text) as { error: string };
    };
    await expectStreamError({}, 401);
    await expectStreamError({ key: 'f'.repeat(64) }, 401);
    await expectStreamError({ queryKey: 'nope' }, 401);
    await expectStreamError({ key: invitation }, 401);
    await expectStreamError({ key: other.ownerKey }, 401);
    await expectStreamError({ key: kicked.key }, 401);
    const { left } = await h.deadKeys(space);
    await expectStreamError({ key: left }, 401);
    await expectStreamError({ key: space.ownerKey }, 404, '00000000-0000-4000-8000-000000000000');
    await expectStreamError({ key: space.ownerKey }, 404, 'not-a-uuid');
    // Named, as listMessages names it.
    expect((await expectStreamError({ key: space.ownerKey, timestamp: 'yesterday' }, 400)).error).toMatch(
      /timestamp: not an RFC 3339 date-time/,
    );
    await expectStreamError({ key: space.ownerKey, lastEventId: 'abc' }, 400);
    await expectStreamError({ key: space.ownerKey, headers: { 'API-Version': '2' } }, 400);
    expectOk(await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
    await expectStreamError({ key: space.ownerKey }, 401);
    const short = await h.createSpace({ ttl: 30 });
    clock.advance(31_000);
    try {
      await expectStreamError({ key: short.ownerKey }, 401);
    } finally {
      clock.advance(-31_000);
    }
  });
});

describe('streamMessages: events', () => {
  it('announces participant changes, each followed by a context', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const stream = await openStream(space);
    await stream.until((e) => e.event === 'context');

    const pending = await h.joinPending(space, { name: 'Joiner' });
    const joined = await stream.take(2);
    expect(kinds(joined)).toEqual(['participant-status', 'context']);
    expect(joined[0]!.json).toEqual({
      participantId: pending.participantId,
      name: 'Joiner',
      role: 'tester',
      avatarUrl: `${srv.url}/avatar/${pending.participantId}.svg`,
      status: 'waitingForApproval',
      isOwner: false,
      isHuman: false,
      lastReadSeq: 0,
    });
    expect(joined[1]!.json.participants.map((p: any) => [p.participantId, p.status])).toEqual([
      [space.ownerId, 'active'],
      [pending.participantId, 'waitingForApproval'],
    ]);

    for (const [action, status] of [
      ['approve', 'active'],
      ['mute', 'muted'],
      ['unmute', 'active'],
      ['kick', 'kicked'],
    ] as const) {
      expectOk(await ownerPost(space, `/participants/${pending.participantId}/${action}`));
      const [event, context] = await stream.take(2);
      expect([event!.event, event!.json.participantId, event!.json.status]).toEqual([
        'participant-status',
        pending.participantId,
        status,
      ]);
      expect(context!.event).toBe('context');
      expect(
        context!.json.participants.find((p: any) => p.participantId === pending.participantId).status,
      ).toBe(status);
    }
    const all = stream.events.filter((e) => e.id !== undefined);
    expect(ids(all)).toEqual([1, 2, 3, 4, 5]);
    stream.close();
  });

  it('announces artifact changes with their summaries', async () => {
    const space = await h.createSpace();
    const stream = await openStream(space);
    await stream.until((e) => e.event === 'context');
    const created = await h.post(`/hub/space/${space.spaceId}/artifact`, {
      key: space.ownerKey,
      body: { name: 'plan.md', type: 'markdown', content: '# Plan' },
    });
    expectOk(created);
    const artifactId = created.body.id;
    const [c, cc] = await stream.take(2);
    expect([c!.event, cc!.event]).toEqual(['artifact-created', 'context']);
    expect(c!.json).toEqual({ id: artifactId, name: 'plan.md', version: 1, updatedAt: expect.any(String) });
    expect(cc!.json.artifacts).toEqual([c!.json]);

    expectOk(
      await h.post(`/hub/space/${space.spaceId}/artifact/${artifactId}/lock`, { key: space.ownerKey }),
    );
    const [locked] = await stream.take(2);
    expect(locked!.event).toBe('artifact-locked');
    expect(locked!.json).toMatchObject({ id: artifactId, version: 1, lockedBy: space.ownerId });
    expect(locked!.json.lockExpiresAt).toEqual(expect.any(String));

    expectOk(
      await h.patch(`/hub/space/${space.spaceId}/artifact/${artifactId}`, {
        key: space.ownerKey,
        body: { content: '# Plan v2' },
      }),
    );
    const [updated] = await stream.take(2);
    expect(updated!.event).toBe('artifact-updated');
    expect(updated!.json).toMatchObject({
      id: artifactId,
      name: 'plan.md',
      version: 2,
      lockedBy: space.ownerId,
    });

    expectOk(
      await h.delete(`/hub/space/${space.spaceId}/artifact/${artifactId}/lock`, { key: space.ownerKey }),
    );
    const [unlocked, context] = await stream.take(2);
    expect(unlocked!.event).toBe('artifact-unlocked');
    expect(unlocked!.json).toEqual({
      id: artifactId,
      name: 'plan.md',
      version: 2,
      updatedAt: expect.any(String),
    });
    expect(context!.json.artifacts).toEqual([unlocked!.json]);
    expect(ids(stream.events.filter((e) => e.id !== undefined))).toEqual([1, 2, 3, 4]);
    stream.close();
  });

  it('delivers a message too big for NOTIFY (fetched from the database) in its place', async () => {
    const space = await h.createSpace();
    const stream = await openStream(space);
    await stream.until((e) => e.event === 'context');
    await send(space, space.ownerKey, 'small');
    const big = `${'é'.repeat(4000)}!`;
    await send(space, space.ownerKey, big);
    await send(space, space.ownerKey, 'after');
    const events = await stream.take(3);
    expect(events.map((e) => [e.id, e.json.content.length])).toEqual([
      ['1', 5],
      ['2', 4001],
      ['3', 5],
    ]);
    expect(events[1]!.json.content).toBe(big);
    stream.close();
  });

  it('ends with space-closed when the owner closes the space', async () => {
    const space = await h.createSpace();
    const p = await h.joinActive(space);
    const owner = await openStream(space);
    const participant = await SseStream.connect(srv.url, space.spaceId, { key: p.key });
    await owner.until((e) => e.event === 'context');
    await participant.until((e) => e.event === 'context');
    expectOk(await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
    for (const stream of [owner, participant]) {
      const closed = await stream.until((e) => e.event === 'space-closed');
      expect(closed.at(-1)!.json).toEqual({ spaceId: space.spaceId, reason: 'closed' });
      expect(Number(closed.at(-1)!.id)).toBeGreaterThan(0);
      await stream.waitForEnd();
      expect(stream.remaining).toEqual([]);
    }
  });

  it('ends with space-closed (expired) when the TTL runs out', async () => {
    const space = await h.createSpace({ ttl: 60 });
    await send(space, space.ownerKey, 'hello');
    const stream = await openStream(space);
    await stream.until((e) => e.event === 'context');
    clock.advance(61_000);
    try {
      const [closed] = await stream.take(1, 3000);
      expect(closed!.event).toBe('space-closed');
      expect(closed!.json).toEqual({ spaceId: space.spaceId, reason: 'expired' });
      expect(closed!.id).toBe('2');
      await stream.waitForEnd();
    } finally {
      clock.advance(-61_000);
    }
  });

  it('ends a kicked or departed participant’s stream right after their own participant-status', async () => {
    const space = await h.createSpace();
    const kicked = await h.joinActive(space, { name: 'Kicked' });
    const leaver = await h.joinActive(space, { name: 'Leaver' });
    const bystander = await h.joinActive(space, { name: 'Bystander' });
    const streams = await Promise.all(
      [kicked, leaver, bystander].map((p) => SseStream.connect(srv.url, space.spaceId, { key: p.key })),
    );
    for (const s of streams) await s.until((e) => e.event === 'context');
    const [kickedStream, leaverStream, bystanderStream] = streams as [SseStream, SseStream, SseStream];

    expectOk(await ownerPost(space, `/participants/${kicked.participantId}/kick`));
    const last = await kickedStream.until((e) => e.event === 'participant-status');
    expect(last.at(-1)!.json).toMatchObject({ participantId: kicked.participantId, status: 'kicked' });
    await kickedStream.waitForEnd();
    expect(kickedStream.remaining).toEqual([]);
    // A change's context is loaded after its event is out, so it may follow later events (and a
    // change made while one loads is folded into the next): wait for each before going on.
    const afterKick = await bystanderStream.until((e) => e.event === 'context');
    expect(kinds(afterKick)).toEqual(['participant-status', 'context']);

    expectOk(await h.post(`/hub/space/${space.spaceId}/leave`, { key: leaver.key }));
    await leaverStream.until(
      (e) => e.event === 'participant-status' && e.json.participantId === leaver.participantId,
    );
    await leaverStream.waitForEnd();
    expect(leaverStream.remaining).toEqual([]);

    const afterLeave = await bystanderStream.until((e) => e.event === 'context');
    expect(kinds(afterLeave)).toEqual(['participant-status', 'context']);

    // Others' departures do not end a stream.
    await send(space, space.ownerKey, 'still here');
    const seen = await bystanderStream.until((e) => e.event === 'message');
    expect(kinds(seen)).toEqual(['message']);
    expect(bystanderStream.ended).toBe(false);
    bystanderStream.close();
  });
});

describe('streamMessages: fan-out in slices', () => {
  it('keeps every stream in order when a fan-out yields between slices', async () => {
    const hub = srv.server.app.eventHub!;
    hub.fanoutSlice = 2;
    try {
      const space = await h.createSpace();
      const streams = await Promise.all(Array.from({ length: 5 }, () => openStream(space)));
      for (const s of streams) await s.until((e) => e.event === 'context');
      const contents = ['a', 'b', `${'x'.repeat(8000)}`, 'c', 'd', 'e'];
      await Promise.all([
        (async () => {
          for (const c of contents.slice(0, 3)) await send(space, space.ownerKey, c);
        })(),
        (async () => {
          for (const c of contents.slice(3)) await send(space, space.ownerKey, c);
        })(),
      ]);
      const expected = (await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey })).body
        .messages;
      for (const s of streams) {
        const got = await s.take(contents.length);
        expect(got.map((e) => e.json)).toEqual(expected);
        expect(ids(got)).toEqual([1, 2, 3, 4, 5, 6]);
        s.close();
      }
    } finally {
      hub.fanoutSlice = 256;
    }
  });
});

describe('streamMessages: resuming', () => {
  it('resumes after a dropped connection with Last-Event-ID: every kind, nothing lost or repeated', async () => {
    const space = await h.createSpace();
    await send(space, space.ownerKey, 'm1');
    const first = await openStream(space);
    const [m1] = await first.take(2);
    await send(space, space.ownerKey, 'm2');
    const m2 = await first.next();
    first.close();
    await first.done;

    // While disconnected: a message, a join, an artifact, another message.
    await send(space, space.ownerKey, 'm3');
    const p = await h.joinActive(space, { name: 'Late' });
    const artifact = await h.post(`/hub/space/${space.spaceId}/artifact`, {
      key: p.key,
      body: { name: 'notes.md', type: 'markdown', content: 'n' },
    });
    expectOk(artifact);
    await send(space, p.key, 'm4');

    const resumed = await openStream(space, { lastEventId: m2.id!, timestamp: '2000-01-01T00:00:00Z' });
    const replay = await resumed.until((e) => e.event === 'context');
    expect(replay.map((e) => [e.id, e.event, e.json.content ?? e.json.name ?? null])).toEqual([
      ['3', 'message', 'm3'],
      ['4', 'participant-status', 'Late'],
      ['5', 'artifact-created', 'notes.md'],
      ['6', 'message', 'm4'],
      [undefined, 'context', null],
    ]);
    expect(replay.at(-1)!.json.participants).toHaveLength(2);
    expect(replay.at(-1)!.json.artifacts.map((a: any) => a.id)).toEqual([artifact.body.id]);
    await send(space, space.ownerKey, 'm5');
    const live = await resumed.next();
    expect([live.id, live.json.content]).toEqual(['7', 'm5']);
    expect(ids([m1!, m2, ...replay.slice(0, -1), live])).toEqual([1, 2, 3, 4, 5, 6, 7]);
    resumed.close();
  });

  it('fills a gap from the database when a notification went missing', async () => {
    const space = await h.createSpace();
    const stream = await openStream(space);
    await stream.until((e) => e.event === 'context');
    await send(space, space.ownerKey, 'seen live');
    // A message committed without its NOTIFY (as when the listener was reconnecting).
    const { db } = srv.server.database;
    await db.execute(sql`
      with bumped as (
        update ${schema.spaces} set message_seq = message_seq + 1, event_seq = event_seq + 1,
          last_message_at = coalesce(last_message_at, created_at) + interval '1 microsecond'
        where id = ${space.spaceId} returning message_seq, event_seq, last_message_at
      )
      insert into messages (space_id, id, seq, event_seq, sender_id, sender_name, is_owner, type, content, created_at)
      select ${space.spaceId}, gen_random_uuid(), message_seq, event_seq, ${space.ownerId}, 'Owner', true, 'text', 'missed', last_message_at
      from bumped`);
    await send(space, space.ownerKey, 'next');
    const events = await stream.take(3);
    expect(events.map((e) => [e.id, e.json.content])).toEqual([
      ['1', 'seen live'],
      ['2', 'missed'],
      ['3', 'next'],
    ]);
    stream.close();
  });

  it("hears what its own node sends without waiting for the bus's notice", async () => {
    // A bus that never brings this node's listener a message: a stream hears its node's sends
    // all the same, as the sending statement answers (EventBus.committed).
    const withoutMessages = (bus: EventBus): EventBus => ({
      ...bus,
      subscribe: (listener) =>
        bus.subscribe({
          ...listener,
          notice: (notice) => {
            if (notice.kind !== 'message') listener.notice(notice);
          },
        }),
    });
    await withServer({ events: withoutMessages }, async ({ srv: node, h: h2 }) => {
      const space = await h2.createSpace();
      const stream = await SseStream.connect(node.url, space.spaceId, { key: space.ownerKey });
      await stream.until((e) => e.event === 'context');
      for (const content of ['one', 'two', 'three']) {
        const res = await h2.post(`/hub/space/${space.spaceId}/messages`, {
          key: space.ownerKey,
          body: { content },
        });
        expectOk(res);
      }
      const events = await stream.take(3, 2000);
      expect(events.map((e) => [e.event, e.id, e.json.content])).toEqual([
        ['message', '1', 'one'],
        ['message', '2', 'two'],
        ['message', '3', 'three'],
      ]);
      stream.close();
    });
  });

  it('ends every stream when the server closes', async () => {
    await withServer({}, async ({ srv: node, h: nh }) => {
      const space = await nh.createSpace();
      const stream = await SseStream.connect(node.url, space.spaceId, { key: space.ownerKey });
      await stream.until((e) => e.event === 'context');
      const started = Date.now();
      await node.close();
      await stream.waitForEnd(5000);
      expect(Date.now() - started).toBeLessThan(5000);
    });
  });
});

describe.runIf(onPostgres())('streamMessages across two nodes', () => {
  it('delivers what one node writes to streams on the other, in one order', async () => {
    await withServer({ databaseUrl: srv.databaseUrl! }, async ({ srv: second, h: h2 }) => {
      const space = await h.createSpace();
      const onFirst = await openStream(space);
      const onSecond = await SseStream.connect(second.url, space.spaceId, { key: space.ownerKey });
      await onFirst.until((e) => e.event === 'context');
      await onSecond.until((e) => e.event === 'context');

      const p = await h2.joinActive(space, { name: 'Via node 2' });
      await Promise.all([
        (async () => {
          for (let i = 0; i < 10; i++) await send(space, space.ownerKey, `a${i}`);
        })(),
        (async () => {
          for (let i = 0; i < 10; i++) {
            const res = await h2.post(`/hub/space/${space.spaceId}/messages`, {
              key: p.key,
              body: { content: `b${i}` },
            });
            expectOk(res);
          }
        })(),
      ]);
      const fromFirst = (await onFirst.until((e) => e.event === 'message' && e.json.seq === 20)).filter(
        (e) => e.id !== undefined,
      );
      const fromSecond = (await onSecond.until((e) => e.event === 'message' && e.json.seq === 20)).filter(
        (e) => e.id !== undefined,
      );
      expect(ids(fromFirst)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
      // The same events, but for the avatarUrl, which each node draws from its own PUBLIC_URL.
      const apartFromAvatar = ({ json }: { json: any }) => ({ ...json, avatarUrl: undefined });
      expect(fromSecond.map(apartFromAvatar)).toEqual(fromFirst.map(apartFromAvatar));
      expect(fromFirst[0]!.event).toBe('participant-status');
      expect(fromFirst[0]!.json.avatarUrl).toBe(`${srv.url}/avatar/${p.participantId}.svg`);
      expect(fromSecond[0]!.json.avatarUrl).toBe(`${second.url}/avatar/${p.participantId}.svg`);

      // A stream on one node resumes on the other.
      onSecond.close();
      await send(space, space.ownerKey, 'while away');
      const resumed = await SseStream.connect(second.url, space.spaceId, {
        key: space.ownerKey,
        lastEventId: fromSecond.at(-1)!.id!,
      });
      const [missed] = await resumed.take(1);
      expect([missed!.id, missed!.json.content]).toEqual(['22', 'while away']);
      resumed.close();
      onFirst.close();
    });
  });
});
