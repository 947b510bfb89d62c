import { OffsetClock, rowsOf, sendMessage } from '@convene/core';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { expectError, expectKeyChecks, expectOk, type SpaceFixture, useServer } from './helpers';
import { SseStream } from './helpers/sse';

const clock = new OffsetClock();

const { srv, h } = useServer({ clock });

const ISO_MICROS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const send = (space: { spaceId: string }, key: string, body: unknown) =>
  h.post(`/hub/space/${space.spaceId}/messages`, { key, body });
const list = (space: { spaceId: string }, key: string, timestamp?: string) =>
  h.get(
    `/hub/space/${space.spaceId}/messages${timestamp === undefined ? '' : `?timestamp=${encodeURIComponent(timestamp)}`}`,
    { key },
  );

describe('sendMessage', () => {
  it('posts a message and answers its id with the context bundle', async () => {
    const space = await h.createSpace({ ownerName: 'Olga' });
    const res = await send(space, space.ownerKey, { content: 'Hello, world' });
    expectOk(res);
    expect(res.body.messageId).toMatch(UUID);
    expect(res.body).toEqual({
      messageId: res.body.messageId,
      participants: [
        {
          participantId: space.ownerId,
          name: 'Olga',
          role: 'owner',
          avatarUrl: `${srv.url}/avatar/${space.ownerId}.svg`,
          status: 'active',
          isOwner: true,
          isHuman: false,
        },
      ],
      artifacts: [],
      suggestedPollingIntervalMs: 2000,
    });

    const listed = await list(space, space.ownerKey);
    expectOk(listed);
    expect(listed.body.messages).toEqual([
      {
        id: res.body.messageId,
        senderId: space.ownerId,
        senderName: 'Olga',
        isOwner: true,
        content: 'Hello, world',
        type: 'text',
        timestamp: expect.stringMatching(ISO_MICROS),
        seq: 1,
      },
    ]);
  });

  it('lets an active participant send text, html and image messages', async () => {
    const space = await h.createSpace();
    const p = await h.joinActive(space, { name: 'Ada' });
    const bodies = [
      { content: 'plain', type: 'text' },
      { content: '<b>bold</b>', type: 'html' },
      { content: 'https://example.com/cat.png', type: 'image' },
      { content: 'data:image/png;base64,iVBORw0KGgo=', type: 'image' },
      { content: `data:image/webp;base64,${'A'.repeat(1_000_000)}`, type: 'image' },
      { content: 'x'.repeat(65_536) },
    ];
    for (const body of bodies) expectOk(await send(space, p.key, body));
    const listed = await list(space, space.ownerKey);
    expect(
      listed.body.messages.map((m: any) => [m.type, m.content.slice(0, 30), m.senderName, m.isOwner]),
    ).toEqual(bodies.map((b) => [b.type ?? 'text', b.content.slice(0, 30), 'Ada', false]));
    expect(listed.body.messages.map((m: any) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    // The context of a participant's reply lists both of them.
    const res = await send(space, p.key, { content: 'again' });
    expect(res.body.participants.map((x: any) => x.participantId)).toEqual([space.ownerId, p.participantId]);
  });

  it.each([
    ['no content', {}],
    ['empty content', { content: '' }],
    ['content over 65,536 characters', { content: 'x'.repeat(65_537) }],
    ['html over 65,536 characters', { content: 'x'.repeat(65_537), type: 'html' }],
    ['an unknown type', { content: 'hi', type: 'video' }],
    ['content that is not a string', { content: 42 }],
    ['a NUL character', { content: 'a\u0000b' }],
    ['an http: image', { content: 'http://example.com/a.png', type: 'image' }],
    ['a javascript: image', { content: 'javascript:alert(1)', type: 'image' }],
    ['an image that is no URL', { content: 'cat.png', type: 'image' }],
    ['an svg data URI', { content: 'data:image/svg+xml;base64,PHN2Zz4=', type: 'image' }],
    ['a data URI that is not base64', { content: 'data:image/png,rawbytes', type: 'image' }],
    ['a data URI with bad base64', { content: 'data:image/png;base64,@@@', type: 'image' }],
    [
      'an image data URI over 1 MiB',
      { content: `data:image/png;base64,${'A'.repeat(1024 * 1024)}`, type: 'image' },
    ],
    [
      'an https image URL over 65,536 characters',
      { content: `https://example.com/${'a'.repeat(65_536)}`, type: 'image' },
    ],
  ])('refuses %s with 400', async (_label, body) => {
    const space = await h.createSpace();
    expectError(await send(space, space.ownerKey, body), 400);
    expect((await list(space, space.ownerKey)).body.messages).toEqual([]);
  });

  it('refuses a muted participant with 403, and lets them send again once unmuted', async () => {
    const space = await h.createSpace();
    const p = await h.joinActive(space);
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${p.participantId}/mute`, {
        key: space.ownerKey,
      }),
    );
    const refused = await send(space, p.key, { content: 'let me speak' });
    expectError(refused, 403);
    expect(refused.body.error).toMatch(/muted/);
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${p.participantId}/unmute`, {
        key: space.ownerKey,
      }),
    );
    expectOk(await send(space, p.key, { content: 'thanks' }));
    const listed = await list(space, space.ownerKey);
    expect(listed.body.messages.map((m: any) => m.content)).toEqual(['thanks']);
    expect(listed.body.messages[0].seq).toBe(1);
  });

  it('answers 409 once the space is closed or expired', async () => {
    const space = await h.createSpace();
    expectOk(await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
    const closed = await send(space, space.ownerKey, { content: 'anyone?' });
    expectError(closed, 409);
    expect(closed.body.error).toBe('space is closed');

    const short = await h.createSpace({ ttl: 30 });
    expectOk(await send(short, short.ownerKey, { content: 'before' }));
    clock.advance(31_000);
    try {
      expectError(await send(short, short.ownerKey, { content: 'after' }), 409);
    } finally {
      clock.advance(-31_000);
    }
  });

  it('answers 404 for an unknown or non-UUID space', async () => {
    const space = await h.createSpace();
    expectError(
      await h.post('/hub/space/00000000-0000-4000-8000-000000000000/messages', {
        key: space.ownerKey,
        body: { content: 'hi' },
      }),
      404,
    );
    expectError(
      await h.post('/hub/space/nope/messages', { key: space.ownerKey, body: { content: 'hi' } }),
      404,
    );
  });

  it('refuses missing, unknown and wrong-type keys, and those of left or kicked participants', async () => {
    const space = await h.createSpace();
    const other = await h.createSpace();
    const invitation = await h.invite(space);
    const kicked = await h.joinActive(space);
    const left = await h.joinActive(space);
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${kicked.participantId}/kick`, {
        key: space.ownerKey,
      }),
    );
    expectOk(await h.post(`/hub/space/${space.spaceId}/leave`, { key: left.key }));
    await expectKeyChecks(h, {
      method: 'POST',
      path: `/hub/space/${space.spaceId}/messages`,
      body: { content: 'hi' },
      wrongKeys: {
        invitation,
        'other space owner': other.ownerKey,
        kicked: kicked.key,
        left: left.key,
      },
    });
    expect((await list(space, space.ownerKey)).body.messages).toEqual([]);
  });
});

describe('listMessages', () => {
  it('pages oldest first with the cursor, 500 at most per call', async () => {
    const space = await h.createSpace();
    const { deps } = srv.server;
    for (let i = 1; i <= 503; i++) {
      await sendMessage({
        deps,
        spaceId: space.spaceId,
        key: space.ownerKey,
        input: { content: `m${i}`, type: 'text' },
      });
    }
    const first = await list(space, space.ownerKey);
    expectOk(first);
    expect(first.body.messages).toHaveLength(500);
    expect(first.body.messages[0].content).toBe('m1');
    expect(first.body.messages[499].content).toBe('m500');
    expect(first.body.cursor).toBe(first.body.messages[499].timestamp);
    expect(first.body).toMatchObject({ artifacts: [], suggestedPollingIntervalMs: 2000 });
    expect(first.body.participants).toHaveLength(1);

    const second = await list(space, space.ownerKey, first.body.cursor);
    expect(second.body.messages.map((m: any) => [m.content, m.seq])).toEqual([
      ['m501', 501],
      ['m502', 502],
      ['m503', 503],
    ]);
    const third = await list(space, space.ownerKey, second.body.cursor);
    expect(third.body.messages).toEqual([]);
    // With nothing new, the cursor is the timestamp that was passed.
    expect(third.body.cursor).toBe(second.body.cursor);
  }, 120_000);

  it('gives strictly increasing microsecond timestamps even within one millisecond', async () => {
    const { deps } = srv.server;
    const fresh = await h.createSpace();
    // A frozen clock an hour ahead: every message is stamped in the same millisecond.
    const base = Math.floor(Date.now() / 1000) * 1000 + 3_600_000;
    const at = (ms: number, fraction: string, zone = 'Z') =>
      new Date(ms).toISOString().replace('.000Z', `.${fraction}${zone}`);
    const frozen = { ...deps, clock: { now: () => new Date(base) } };
    for (let i = 0; i < 3; i++) {
      await sendMessage({
        deps: frozen,
        spaceId: fresh.spaceId,
        key: fresh.ownerKey,
        input: { content: `f${i}`, type: 'text' },
      });
    }
    const listed = await list(fresh, fresh.ownerKey);
    expect(listed.body.messages.map((m: any) => m.timestamp)).toEqual([
      at(base, '000000'),
      at(base, '000001'),
      at(base, '000002'),
    ]);
    // A clock that goes backwards (another node's) never makes timestamps go backwards.
    const earlier = { ...deps, clock: { now: () => new Date(base - 600_000) } };
    await sendMessage({
      deps: earlier,
      spaceId: fresh.spaceId,
      key: fresh.ownerKey,
      input: { content: 'late', type: 'text' },
    });
    const after = await list(fresh, fresh.ownerKey, at(base, '000002'));
    expect(after.body.messages.map((m: any) => [m.content, m.timestamp])).toEqual([
      ['late', at(base, '000003')],
    ]);
    // Offsets and extra digits are understood (cut to microseconds, never rounded up).
    const viaOffset = await list(fresh, fresh.ownerKey, at(base + 3_600_000, '0000019', '+01:00'));
    expect(viaOffset.body.messages.map((m: any) => m.content)).toEqual(['f2', 'late']);
    expect(viaOffset.body.cursor).toBe(at(base, '000003'));
  });

  it('starts at the space creation time when there is nothing yet', async () => {
    const space = await h.createSpace();
    const empty = await list(space, space.ownerKey);
    expectOk(empty);
    expect(empty.body.messages).toEqual([]);
    expect(empty.body.cursor).toMatch(ISO_MICROS);
    expectOk(await send(space, space.ownerKey, { content: 'first' }));
    // The first message lies after the creation-time cursor, even in the same millisecond.
    const next = await list(space, space.ownerKey, empty.body.cursor);
    expect(next.body.messages.map((m: any) => m.content)).toEqual(['first']);
    expect(next.body.messages[0].timestamp > empty.body.cursor).toBe(true);
  });

  it('lets muted participants read', async () => {
    const space = await h.createSpace();
    const p = await h.joinActive(space);
    expectOk(await send(space, space.ownerKey, { content: 'hi' }));
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${p.participantId}/mute`, {
        key: space.ownerKey,
      }),
    );
    const res = await list(space, p.key);
    expectOk(res);
    expect(res.body.messages.map((m: any) => m.content)).toEqual(['hi']);
  });

  it.each([
    ['yesterday'],
    ['2030-13-01T00:00:00Z'],
    ['2030-02-30T00:00:00Z'],
    ['0000-01-01T00:00:00Z'],
    ['1700000000'],
  ])('refuses timestamp=%s with 400', async (timestamp) => {
    const space = await h.createSpace();
    expectError(await list(space, space.ownerKey, timestamp), 400);
  });

  it('refuses missing, unknown and wrong-type keys; a closed space answers 401; unknown spaces 404', async () => {
    const space = await h.createSpace();
    const other = await h.createSpace();
    await expectKeyChecks(h, {
      method: 'GET',
      path: `/hub/space/${space.spaceId}/messages`,
      wrongKeys: { invitation: await h.invite(space), 'other space owner': other.ownerKey },
    });
    expectError(
      await h.get('/hub/space/00000000-0000-4000-8000-000000000000/messages', { key: space.ownerKey }),
      404,
    );
    expectError(await h.get('/hub/space/x/messages', { key: space.ownerKey }), 404);
    expectOk(await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
    expectError(await list(space, space.ownerKey), 401);
  });
});

describe('concurrent senders', () => {
  it('delivers every message exactly once, in order, to a cursor poller and a stream', async () => {
    const space: SpaceFixture = await h.createSpace();
    const senders = [space.ownerKey];
    for (let i = 0; i < 3; i++) senders.push((await h.joinActive(space, { name: `P${i}` })).key);
    const stream = await SseStream.connect(srv.url, space.spaceId, { key: space.ownerKey });
    await stream.until((e) => e.event === 'context');

    const perSender = 15;
    const total = senders.length * perSender;
    const polled: any[] = [];
    let sending = true;
    const poller = (async () => {
      let cursor: string | undefined;
      while (sending || polled.length < total) {
        const res = await list(space, space.ownerKey, cursor);
        expect(res.status).toBe(200);
        polled.push(...res.body.messages);
        cursor = res.body.cursor;
        if (!sending && res.body.messages.length === 0) break;
      }
    })();
    await Promise.all(
      senders.map(async (key, s) => {
        for (let i = 0; i < perSender; i++) expectOk(await send(space, key, { content: `${s}:${i}` }));
      }),
    );
    sending = false;
    await poller;

    const streamed = (await stream.take(total, 10_000)).map((e) => {
      expect(e.event).toBe('message');
      return e.json;
    });
    stream.close();
    for (const seen of [polled, streamed]) {
      expect(seen.map((m) => m.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      const stamps = seen.map((m) => m.timestamp);
      for (let i = 1; i < stamps.length; i++) expect(stamps[i] > stamps[i - 1]).toBe(true);
      // Each sender's own messages keep their order.
      for (let s = 0; s < senders.length; s++) {
        expect(seen.filter((m) => m.content.startsWith(`${s}:`)).map((m) => m.content)).toEqual(
          Array.from({ length: perSender }, (_, i) => `${s}:${i}`),
        );
      }
    }
    expect(streamed).toEqual(polled);
  });
});

describe('group commit', () => {
  it('gives each of a batch of concurrent sends its own answer, numbered in arrival order per space', async () => {
    const { deps } = srv.server;
    const a = await h.createSpace();
    const b = await h.createSpace();
    const closed = await h.createSpace();
    expectOk(await h.delete(`/hub/space/${closed.spaceId}`, { key: closed.ownerKey }));
    const p = await h.joinActive(a, { name: 'P' });
    const muted = await h.joinActive(a, { name: 'M' });
    expectOk(
      await h.post(`/hub/space/${a.spaceId}/participants/${muted.participantId}/mute`, { key: a.ownerKey }),
    );
    const kicked = await h.joinActive(a, { name: 'K' });
    expectOk(
      await h.post(`/hub/space/${a.spaceId}/participants/${kicked.participantId}/kick`, { key: a.ownerKey }),
    );

    // Called in one tick: the first two go out alone, every later one in the next statement.
    const sends: [SpaceFixture, string, string][] = [
      [a, a.ownerKey, 'a1'],
      [b, b.ownerKey, 'b1'],
      [a, p.key, 'a2'],
      [a, muted.key, 'muted'],
      [a, kicked.key, 'kicked'],
      [closed, closed.ownerKey, 'closed'],
      [a, a.ownerKey, 'a3'],
      [b, b.ownerKey, 'b2'],
      [a, 'f'.repeat(64), 'unknown key'],
      [a, p.key, 'a4'],
      [b, b.ownerKey, 'b3'],
    ];
    const settled = await Promise.allSettled(
      sends.map(([space, key, content]) =>
        sendMessage({ deps, spaceId: space.spaceId, key, input: { content, type: 'text' } }),
      ),
    );
    const outcome = settled.map((s) =>
      s.status === 'fulfilled' ? 'ok' : (s.reason as { code: string }).code,
    );
    expect(outcome).toEqual([
      'ok',
      'ok',
      'ok',
      'FORBIDDEN',
      'UNAUTHORIZED',
      'CONFLICT',
      'ok',
      'ok',
      'UNAUTHORIZED',
      'ok',
      'ok',
    ]);
    // Each reply carries its own space's context.
    const reply = (i: number) => (settled[i] as PromiseFulfilledResult<any>).value;
    expect(reply(7).participants.map((x: any) => x.participantId)).toEqual([b.ownerId]);
    expect(reply(9).participants.map((x: any) => x.name)).toEqual(['Owner', 'P', 'M', 'K']);

    // The three statements run on two connections, so whole batches may commit in either order;
    // within the third, each space's messages are consecutive and in arrival order.
    for (const [space, all, batched] of [
      [a, ['a1', 'a2', 'a3', 'a4'], ['a2', 'a3', 'a4']],
      [b, ['b1', 'b2', 'b3'], ['b2', 'b3']],
    ] as const) {
      const messages = (await list(space, space.ownerKey)).body.messages;
      const contents: string[] = messages.map((m: any) => m.content);
      expect([...contents].sort()).toEqual([...all]);
      expect(messages.map((m: any) => m.seq)).toEqual(all.map((_, i) => i + 1));
      const first = contents.indexOf(batched[0]);
      expect(contents.slice(first, first + batched.length)).toEqual([...batched]);
      for (const m of messages) {
        const sent = sends.findIndex(([s, , content]) => s === space && content === m.content);
        expect(m.id).toBe(reply(sent).messageId);
      }
      for (let i = 1; i < messages.length; i++)
        expect(messages[i].timestamp > messages[i - 1].timestamp).toBe(true);
    }
    expect((await list(closed, closed.ownerKey)).status).toBe(401);

    // One statement, one transaction: the rows the third batch wrote share their xmin.
    const result = await deps.db.execute(
      sql`select content, xmin::text as tx from messages where space_id in (${a.spaceId}, ${b.spaceId})`,
    );
    const tx = new Map(rowsOf<{ content: string; tx: string }>(result).map((r) => [r.content, r.tx]));
    expect(new Set(['a2', 'a3', 'a4', 'b2', 'b3'].map((c) => tx.get(c))).size).toBe(1);
    expect(new Set(['a1', 'b1', 'a2'].map((c) => tx.get(c))).size).toBe(3);
  });
});
