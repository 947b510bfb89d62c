import { describe, expect, it } from 'vitest';
import { expectError, expectOk, useServer } from './helpers';
import { callOk, connectMcp } from './helpers/mcp';
import { SseStream } from './helpers/sse';

const { srv, h } = useServer();

describe('maxMessagesPerMinute', () => {
  it('throttles a looping sender with 429 and Retry-After while the others go on', async () => {
    const space = await h.createSpace();
    const loop = await h.joinActive(space, { name: 'Looper' });
    const calm = await h.joinActive(space, { name: 'Calm' });
    const set = await h.put(`/hub/space/${space.spaceId}`, {
      key: space.ownerKey,
      body: { maxMessagesPerMinute: 3 },
    });
    expectOk(set);
    expect((await h.get(`/hub/space/${space.spaceId}`, { key: calm.key })).body.maxMessagesPerMinute).toBe(3);

    const statuses: number[] = [];
    const idempotencyKeys = Array.from({ length: 5 }, () => crypto.randomUUID());
    for (let i = 0; i < 5; i++) {
      const res = await h.post(`/hub/space/${space.spaceId}/messages`, {
        key: loop.key,
        body: { content: `${i}` },
        headers: { 'Idempotency-Key': idempotencyKeys[i]! },
      });
      statuses.push(res.status);
      if (res.status === 429) {
        expectError(res, 429);
        const retryAfter = Number(res.headers.get('retry-after'));
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(60);
        expect(res.body.error).toBe('this space allows each participant 3 messages per minute');
        expect(res.body.retryAfter).toBe(retryAfter);
      }
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    // Others are not held back, and neither is anything else the looper does.
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/messages`, {
        key: calm.key,
        body: { content: 'fine, @Looper' },
      }),
    );
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey, body: { content: 'ok' } }),
    );
    expectOk(await h.get(`/hub/space/${space.spaceId}/messages`, { key: loop.key }));
    const listed = await h.get(`/hub/space/${space.spaceId}/messages`, { key: calm.key });
    expect(listed.body.messages.map((m: any) => m.content)).toEqual(['0', '1', '2', 'fine, @Looper', 'ok']);

    // A budget of one says so in the singular.
    expectOk(
      await h.put(`/hub/space/${space.spaceId}`, { key: space.ownerKey, body: { maxMessagesPerMinute: 1 } }),
    );
    const single = await h.post(`/hub/space/${space.spaceId}/messages`, {
      key: calm.key,
      body: { content: 'x' },
    });
    expect([single.status, single.body.error]).toEqual([
      429,
      'this space allows each participant 1 message per minute',
    ]);

    // Removing the budget lets the looper speak again at once.
    expectOk(
      await h.put(`/hub/space/${space.spaceId}`, {
        key: space.ownerKey,
        body: { maxMessagesPerMinute: null },
      }),
    );
    expect(
      (await h.get(`/hub/space/${space.spaceId}`, { key: calm.key })).body.maxMessagesPerMinute,
    ).toBeUndefined();
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/messages`, { key: loop.key, body: { content: 'free' } }),
    );
    // A refused send was never an answer: its retry with the same Idempotency-Key runs now.
    const retried = await h.post(`/hub/space/${space.spaceId}/messages`, {
      key: loop.key,
      body: { content: '3' },
      headers: { 'Idempotency-Key': idempotencyKeys[3]! },
    });
    expectOk(retried);
    expect(retried.headers.get('idempotency-replayed')).toBeNull();
    const after = await h.get(`/hub/space/${space.spaceId}/messages`, { key: calm.key });
    expect(after.body.messages.map((m: any) => m.content).slice(-2)).toEqual(['free', '3']);
  });

  it('counts concurrent sends exactly: never more than the budget gets through', async () => {
    const space = await h.createSpace();
    const loop = await h.joinActive(space, { name: 'Looper' });
    expectOk(
      await h.put(`/hub/space/${space.spaceId}`, { key: space.ownerKey, body: { maxMessagesPerMinute: 5 } }),
    );
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        h.post(`/hub/space/${space.spaceId}/messages`, { key: loop.key, body: { content: `${i}` } }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    expect(results.filter((r) => r.status === 429)).toHaveLength(15);
  });

  it('is the owner’s to set, within 1 to 10,000', async () => {
    const space = await h.createSpace();
    const guest = await h.joinActive(space);
    expectError(
      await h.put(`/hub/space/${space.spaceId}`, { key: guest.key, body: { maxMessagesPerMinute: 1 } }),
      401,
    );
    for (const value of [0, -1, 10_001, 1.5, '5']) {
      expectError(
        await h.put(`/hub/space/${space.spaceId}`, {
          key: space.ownerKey,
          body: { maxMessagesPerMinute: value },
        }),
        400,
      );
    }
    expect(
      (await h.get(`/hub/space/${space.spaceId}`, { key: guest.key })).body.maxMessagesPerMinute,
    ).toBeUndefined();
  });
});

describe('verified presence', () => {
  it('sets lastSeenAt when a key works, and not for keys that do not', async () => {
    const space = await h.createSpace();
    const guest = await h.joinActive(space, { name: 'Quiet' });
    const before = Date.now();
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    const seen = (id: string) => view.body.participants.find((p: any) => p.participantId === id);
    // The owner's call itself is seen; the guest joined, but has not used their key yet.
    expect(Date.parse(seen(space.ownerId).lastSeenAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(seen(guest.participantId).lastSeenAt).toBeUndefined();
    expect(seen(guest.participantId).lastReadSeq).toBe(0);

    // A request refused for its input still proves the key; the context bundle carries it.
    expectError(await h.post(`/hub/space/${space.spaceId}/messages`, { key: guest.key, body: {} }), 400);
    const sent = await h.post(`/hub/space/${space.spaceId}/messages`, {
      key: space.ownerKey,
      body: { content: 'x' },
    });
    const guestView = sent.body.participants.find((p: any) => p.participantId === guest.participantId);
    expect(Date.parse(guestView.lastSeenAt)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('sets lastSeenAt for an MCP call whose key is its privateKey argument', async () => {
    const space = await h.createSpace();
    const agent = await h.joinActive(space, { name: 'Argued' });
    // No X-Private-Key on the connection: the key travels in the call, as most MCP hosts send it.
    const client = await connectMcp(srv.listenUrl);
    try {
      const before = Date.now();
      await callOk(client, 'get_space', { spaceId: space.spaceId, privateKey: agent.key });
      const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
      const seen = view.body.participants.find((p: any) => p.participantId === agent.participantId);
      expect(Date.parse(seen.lastSeenAt)).toBeGreaterThanOrEqual(before - 1000);
    } finally {
      await client.close();
    }
  });

  it('is not moved by a page, a file of one or an avatar fetched with the key', async () => {
    const space = await h.createSpace();
    const guest = await h.joinActive(space, { name: 'Lurker' });
    for (const path of [`/space/${space.spaceId}`, '/web/style.css', `/avatar/${guest.participantId}.svg`])
      expectOk(await h.get(path, { key: guest.key }));
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    const lurker = view.body.participants.find((p: any) => p.participantId === guest.participantId);
    expect(lurker.lastSeenAt).toBeUndefined();
  });

  it('keeps a participant with an open stream seen', async () => {
    const space = await h.createSpace();
    const guest = await h.joinActive(space, { name: 'Streamer' });
    const stream = await SseStream.connect(srv.listenUrl, space.spaceId, { key: guest.key });
    try {
      await stream.until((e) => e.event === 'context');
      const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
      const streamer = view.body.participants.find((p: any) => p.participantId === guest.participantId);
      expect(streamer.lastSeenAt).toEqual(expect.stringMatching(/^\d{4}-/));
    } finally {
      stream.close();
    }
  });
});

describe('presence of a connection held open', () => {
  // Written again every second here (every 14 s by default, under a stream's 15-s ping).
  const { srv: node, h: api } = useServer({ config: { presenceIntervalMs: 1_500, presenceHeldMs: 1_000 } });
  const ageOf = async (space: { spaceId: string; ownerKey: string }, participantId: string) => {
    const view = await api.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    const seen = view.body.participants.find((p: any) => p.participantId === participantId).lastSeenAt;
    return Date.now() - Date.parse(seen);
  };
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('an open stream keeps lastSeenAt within the interval, and stops once it closes', async () => {
    const space = await api.createSpace();
    const guest = await api.joinActive(space, { name: 'Watcher' });
    const stream = await SseStream.connect(node.listenUrl, space.spaceId, { key: guest.key });
    try {
      await stream.until((e) => e.event === 'context');
      // Long past the held keys' round, with no ping (15 s) in between.
      await pause(4_000);
      expect(await ageOf(space, guest.participantId)).toBeLessThan(1_500);
    } finally {
      stream.close();
    }
    await pause(3_000);
    expect(await ageOf(space, guest.participantId)).toBeGreaterThan(2_500);
  }, 20_000);

  it('an MCP session’s notification stream, opened with the key, keeps lastSeenAt within the interval', async () => {
    const space = await api.createSpace();
    const guest = await api.joinActive(space, { name: 'Agent' });
    // The official client opens the session's GET stream once initialized.
    const client = await connectMcp(node.listenUrl, { 'X-Private-Key': guest.key });
    try {
      await pause(4_000);
      expect(await ageOf(space, guest.participantId)).toBeLessThan(1_500);
    } finally {
      await client.close();
    }
  }, 20_000);

  it('an MCP wait_for_messages with the key as its argument keeps lastSeenAt within the interval', async () => {
    const space = await api.createSpace();
    const guest = await api.joinActive(space, { name: 'Waiter' });
    const client = await connectMcp(node.listenUrl);
    try {
      const waiting = callOk(client, 'wait_for_messages', {
        spaceId: space.spaceId,
        privateKey: guest.key,
        timestamp: new Date().toISOString(),
        timeoutSeconds: 6,
      });
      await pause(4_500);
      expect(await ageOf(space, guest.participantId)).toBeLessThan(1_500);
      expect((await waiting).messages).toEqual([]);
    } finally {
      await client.close();
    }
  }, 20_000);

  it('a long poll keeps lastSeenAt within the interval while it waits', async () => {
    const space = await api.createSpace();
    const guest = await api.joinActive(space, { name: 'Poller' });
    const waiting = api.get(`/hub/space/${space.spaceId}/inbox?wait=6`, { key: guest.key });
    await pause(4_500);
    expect(await ageOf(space, guest.participantId)).toBeLessThan(1_500);
    expectOk(await waiting);
  }, 20_000);
});
