import { OffsetClock, rowsOf, sendMessage } from '@convene/core';
import {
  AuthenticationError,
  ConflictError,
  type MessageView,
  NotFoundError,
  PermissionDeniedError,
  type SendMessageParams,
  type SpaceClient,
} from '@convene/sdk';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  expectAnswer,
  expectError,
  expectKeyChecks,
  expectOk,
  idOf,
  type OwnedSpace,
  sdkError,
  useServer,
} from './helpers';
import { SseStream } from './helpers/sse';

const clock = new OffsetClock();

/**
 * Messages sent and read through the SDK; bodies and timestamps that break the contract, and
 * missing or wrong keys, over raw HTTP.
 */
const { srv, h, sdk } = useServer({ clock });

const ISO_MICROS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const send = (space: { spaceId: string }, key: string, body: unknown) =>
  h.post(`/hub/space/${space.spaceId}/messages`, { key, body });
const list = (space: { spaceId: string }, key: string, timestamp?: string) =>
  h.get(
    `/hub/space/${space.spaceId}/messages${timestamp === undefined ? '' : `?timestamp=${encodeURIComponent(timestamp)}`}`,
    { key },
  );

/** The first page of a client's messages (after `since`). */
const page = (client: SpaceClient, since?: string) => client.messages.list({ since });
describe('sendMessage', () => {
  it('posts a message and answers its id with the context bundle', async () => {
    const space = await sdk.createSpace({ ownerName: 'Olga' });
    const res = await space.owner.messages.send('Hello, world').withResponse();
    expectAnswer(res);
    expect(res.data.messageId).toMatch(UUID);
    expect(res.data).toEqual({
      messageId: res.data.messageId,
      mentions: [],
      participants: [
        {
          participantId: space.ownerId,
          name: 'Olga',
          role: 'owner',
          avatarUrl: `${srv.url}/avatar/${space.ownerId}.svg`,
          status: 'active',
          isOwner: true,
          isHuman: false,
          // The send itself: the server saw the owner's key work.
          lastSeenAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          lastReadSeq: 0,
        },
      ],
      artifacts: [],
      suggestedPollingIntervalMs: 2000,
    });

    const listed = await page(space.owner).withResponse();
    expectAnswer(listed);
    expect(listed.data.messages).toEqual([
      {
        id: res.data.messageId,
        senderId: space.ownerId,
        senderName: 'Olga',
        isOwner: true,
        content: 'Hello, world',
        type: 'text',
        timestamp: expect.stringMatching(ISO_MICROS),
        seq: 1,
        mentions: [],
      },
    ]);
  });

  it('lets an active participant send text, html and image messages', async () => {
    const space = await sdk.createSpace();
    const p = await sdk.joinActive(space.owner, { name: 'Ada' });
    const bodies: SendMessageParams[] = [
      { content: 'plain', type: 'text' },
      { content: '<b>bold</b>', type: 'html' },
      { content: 'https://example.com/cat.png', type: 'image' },
      { content: 'data:image/png;base64,iVBORw0KGgo=', type: 'image' },
      { content: `data:image/webp;base64,${'A'.repeat(1_000_000)}`, type: 'image' },
      { content: 'x'.repeat(65_536) },
    ];
    for (const body of bodies) expectAnswer(await p.messages.send(body).withResponse());
    const listed = await page(space.owner);
    expect(listed.messages.map((m) => [m.type, m.content.slice(0, 30), m.senderName, m.isOwner])).toEqual(
      bodies.map((b) => [b.type ?? 'text', b.content.slice(0, 30), 'Ada', false]),
    );
    expect(listed.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    // The context of a participant's reply lists both of them.
    const res = await p.messages.send('again');
    expect(res.participants.map((x) => x.participantId)).toEqual([space.ownerId, idOf(p)]);
  });

  it('counts the 65,536 of content in characters, as names are counted: an emoji is one', async () => {
    const space = await h.createSpace();
    const emoji = '\u{1F600}';
    for (const type of ['text', 'html'] as const) {
      const at = await send(space, space.ownerKey, { content: emoji.repeat(65_536), type });
      expectOk(at);
      expectError(await send(space, space.ownerKey, { content: emoji.repeat(65_537), type }), 400);
    }
    const listed = (await list(space, space.ownerKey)).body.messages as MessageView[];
    expect(listed.map((m) => [...m.content].length)).toEqual([65_536, 65_536]);
  });

  it('keeps content character for character: a leading U+FEFF is no byte order mark to drop', async () => {
    // PGlite decoded every text value with a TextDecoder that took a leading U+FEFF for a byte
    // order mark and dropped it (patches/@electric-sql__pglite@0.5.16.patch keeps it).
    const space = await h.createSpace();
    const contents = ['\uFEFFhello', '\uFEFF\uFEFFtwice', '\uFEFF'];
    for (const content of contents) expectOk(await send(space, space.ownerKey, { content }));
    const listed = (await list(space, space.ownerKey)).body.messages as MessageView[];
    expect(listed.map((m) => m.content)).toEqual(contents);
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
    // The URL parser would drop them, and store another URL than the one sent.
    ['an image URL with a leading space', { content: ' https://example.com/a.png', type: 'image' }],
    [
      'an image URL with a line break',
      { content: 'https://x.example/a.png\njavascript:alert(1)', type: 'image' },
    ],
    ['an image URL with a tab', { content: 'https://x.example/a\t.png', type: 'image' }],
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

  it.each([
    ['no content', {}, 'content is required'],
    ['empty content', { content: '' }, 'content must not be empty'],
    [
      'content over 65,536 characters',
      { content: 'x'.repeat(65_537) },
      'content is at most 65536 characters',
    ],
    // Beyond the image limit too: said once, not once per limit.
    [
      'content over 1 MiB',
      { content: 'x'.repeat(1_048_577) },
      'content is at most 65536 characters (an image data URI 1048576)',
    ],
    ['an unknown type', { content: 'hi', type: 'video' }, 'type must be one of "text", "image", "html"'],
    ['content that is not a string', { content: 42 }, 'content must be a string'],
    ['a mention that is no id', { content: 'hi', mentions: ['bob'] }, 'mentions.0: must be a UUID'],
  ])('says in words what is wrong with %s, naming the field once', async (_label, body, message) => {
    const space = await h.createSpace();
    const refused = await send(space, space.ownerKey, body);
    expectError(refused, 400, 'invalid_request');
    expect(refused.body.error).toBe(`invalid request: ${message}`);
    expect(refused.body.issues).toEqual([{ path: expect.any(Array), message: expect.any(String) }]);
  });

  it('refuses a muted participant with 403, and lets them send again once unmuted', async () => {
    const space = await sdk.createSpace();
    const p = await sdk.joinActive(space.owner);
    expectAnswer(await space.owner.participants.mute(idOf(p)).withResponse());
    const refused = await sdkError(p.messages.send('let me speak'), PermissionDeniedError);
    expect(refused.body?.error).toMatch(/muted/);
    expectAnswer(await space.owner.participants.unmute(idOf(p)).withResponse());
    expectAnswer(await p.messages.send('thanks').withResponse());
    const listed = await page(space.owner);
    expect(listed.messages.map((m) => m.content)).toEqual(['thanks']);
    expect(listed.messages[0]?.seq).toBe(1);
  });

  it('answers 409 once the space is closed or expired', async () => {
    const space = await sdk.createSpace();
    expectAnswer(await space.owner.close().withResponse());
    const closed = await sdkError(space.owner.messages.send('anyone?'), ConflictError);
    expect(closed.body?.error).toBe('space is closed');

    const short = await sdk.createSpace({ ttl: 30 });
    expectAnswer(await short.owner.messages.send('before').withResponse());
    clock.advance(31_000);
    try {
      await sdkError(short.owner.messages.send('after'), ConflictError);
    } finally {
      clock.advance(-31_000);
    }
  });

  it('answers 404 for an unknown or non-UUID space', async () => {
    const { ownerKey } = await sdk.createSpace();
    await sdkError(
      sdk.space('00000000-0000-4000-8000-000000000000', ownerKey).messages.send('hi'),
      NotFoundError,
    );
    await sdkError(sdk.space('nope', ownerKey).messages.send('hi'), NotFoundError);
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
  // 503 sends one after another, then every page twice: more than the default 30 s on a loaded machine.
  it('pages oldest first with the cursor, 500 at most per call', async () => {
    const space = await sdk.createSpace();
    const { deps } = srv.server;
    for (let i = 1; i <= 503; i++) {
      await sendMessage({
        deps,
        spaceId: space.spaceId,
        key: space.ownerKey,
        input: { content: `m${i}`, type: 'text' },
      });
    }
    const answer = await page(space.owner).withResponse();
    expectAnswer(answer);
    const first = answer.data;
    expect(first.messages).toHaveLength(500);
    expect(first.messages[0]?.content).toBe('m1');
    expect(first.messages[499]?.content).toBe('m500');
    expect(first.cursor).toBe(first.messages[499]?.timestamp);
    expect(first).toMatchObject({ artifacts: [], suggestedPollingIntervalMs: 2000 });
    expect(first.participants).toHaveLength(1);

    const second = await page(space.owner, first.cursor);
    expect(second.messages.map((m) => [m.content, m.seq])).toEqual([
      ['m501', 501],
      ['m502', 502],
      ['m503', 503],
    ]);
    const third = await page(space.owner, second.cursor);
    expect(third.messages).toEqual([]);
    // With nothing new, the cursor is the timestamp that was passed.
    expect(third.cursor).toBe(second.cursor);
    // Iterated, the list follows the cursors through every page, each message once.
    const all = space.owner.messages.list();
    const contents: string[] = [];
    for await (const message of all) contents.push(message.content);
    expect(contents).toEqual(Array.from({ length: 503 }, (_, i) => `m${i + 1}`));
    expect(all.cursor).toBe(second.cursor);
  }, 120_000);

  it('gives strictly increasing microsecond timestamps even within one millisecond', async () => {
    const { deps } = srv.server;
    const fresh = await sdk.createSpace();
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
    const listed = await page(fresh.owner);
    expect(listed.messages.map((m) => m.timestamp)).toEqual([
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
    const after = await page(fresh.owner, at(base, '000002'));
    expect(after.messages.map((m) => [m.content, m.timestamp])).toEqual([['late', at(base, '000003')]]);
    // Offsets and extra digits are understood (cut to microseconds, never rounded up).
    const viaOffset = await page(fresh.owner, at(base + 3_600_000, '0000019', '+01:00'));
    expect(viaOffset.messages.map((m) => m.content)).toEqual(['f2', 'late']);
    expect(viaOffset.cursor).toBe(at(base, '000003'));
  });

  it('starts at the space creation time when there is nothing yet', async () => {
    const { owner } = await sdk.createSpace();
    const answer = await page(owner).withResponse();
    expectAnswer(answer);
    const empty = answer.data;
    expect(empty.messages).toEqual([]);
    expect(empty.cursor).toMatch(ISO_MICROS);
    expectAnswer(await owner.messages.send('first').withResponse());
    // The first message lies after the creation-time cursor, even in the same millisecond.
    const next = await page(owner, empty.cursor);
    expect(next.messages.map((m) => m.content)).toEqual(['first']);
    expect(next.messages[0]!.timestamp > empty.cursor).toBe(true);
  });

  it('lets muted participants read', async () => {
    const space = await sdk.createSpace();
    const p = await sdk.joinActive(space.owner);
    expectAnswer(await space.owner.messages.send('hi').withResponse());
    expectAnswer(await space.owner.participants.mute(idOf(p)).withResponse());
    const res = await page(p).withResponse();
    expectAnswer(res);
    expect(res.data.messages.map((m) => m.content)).toEqual(['hi']);
  });

  it.each([
    ['yesterday'],
    ['2030-13-01T00:00:00Z'],
    ['2030-02-30T00:00:00Z'],
    ['0000-01-01T00:00:00Z'],
    ['1700000000'],
  ])('refuses timestamp=%s with 400, said once', async (timestamp) => {
    const space = await h.createSpace();
    const res = await list(space, space.ownerKey, timestamp);
    expectError(res, 400);
    expect(res.body.error.match(/timestamp:/g)).toHaveLength(1);
  });

  it('takes the lower-case t and z that RFC 3339 allows (section 5.6)', async () => {
    const { owner } = await sdk.createSpace();
    const { cursor } = await page(owner);
    expectAnswer(await owner.messages.send('after').withResponse());
    const lower = cursor.replace('T', 't').replace(/Z$/, 'z');
    expect(lower).not.toBe(cursor);
    const res = await page(owner, lower).withResponse();
    expectAnswer(res);
    expect(res.data.messages.map((m) => m.content)).toEqual(['after']);
  });

  it('says what a timestamp looks like', async () => {
    const space = await h.createSpace();
    const res = await list(space, space.ownerKey, 'yesterday');
    expect(res.body.error).toMatch(/timestamp: not an RFC 3339 date-time \(e\.g\. 2030-01-01T12:00:00Z\)/);
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
    const space = await sdk.createSpace();
    const senders = [space.owner];
    for (let i = 0; i < 3; i++) senders.push(await sdk.joinActive(space.owner, { name: `P${i}` }));
    // The stream as it goes over the wire: the SDK's own reader would hide a duplicate.
    const stream = await SseStream.connect(srv.url, space.spaceId, { key: space.ownerKey });
    await stream.until((e) => e.event === 'context');

    const perSender = 15;
    const total = senders.length * perSender;
    const polled: MessageView[] = [];
    let sending = true;
    const poller = (async () => {
      let cursor: string | undefined;
      while (sending || polled.length < total) {
        const res = await page(space.owner, cursor).withResponse();
        expect(res.response.status).toBe(200);
        polled.push(...res.data.messages);
        cursor = res.data.cursor;
        if (!sending && res.data.messages.length === 0) break;
      }
    })();
    await Promise.all(
      senders.map(async (sender, s) => {
        for (let i = 0; i < perSender; i++)
          expectAnswer(await sender.messages.send(`${s}:${i}`).withResponse());
      }),
    );
    sending = false;
    await poller;

    const streamed: MessageView[] = (await stream.take(total, 10_000)).map((e) => {
      expect(e.event).toBe('message');
      return e.json;
    });
    stream.close();
    for (const seen of [polled, streamed]) {
      expect(seen.map((m) => m.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      const stamps = seen.map((m) => m.timestamp);
      for (let i = 1; i < stamps.length; i++) expect(stamps[i]! > stamps[i - 1]!).toBe(true);
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
    const a = await sdk.createSpace();
    const b = await sdk.createSpace();
    const closed = await sdk.createSpace();
    expectAnswer(await closed.owner.close().withResponse());
    const p = await sdk.joinActive(a.owner, { name: 'P' });
    const muted = await sdk.joinActive(a.owner, { name: 'M' });
    expectAnswer(await a.owner.participants.mute(idOf(muted)).withResponse());
    const kicked = await sdk.joinActive(a.owner, { name: 'K' });
    expectAnswer(await a.owner.participants.kick(idOf(kicked)).withResponse());

    // Called in one tick. On PostgreSQL the first goes out alone, every later one in the next
    // statement (which waits for the first, unless that one stalls); on the embedded database,
    // whose statements run in this thread, all of them in one, at the end of the tick.
    const sends: [OwnedSpace, string, string][] = [
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
      s.status === 'fulfilled' ? 'ok' : (s.reason as { kind: string }).kind,
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

    // A stalled first statement lets the second overlap it, so whole batches may commit in either
    // order; within the second, each space's messages are consecutive and in arrival order.
    const embedded = srv.server.database.engine === 'pglite';
    for (const [space, all, batched] of [
      [a, ['a1', 'a2', 'a3', 'a4'], embedded ? ['a1', 'a2', 'a3', 'a4'] : ['a2', 'a3', 'a4']],
      [b, ['b1', 'b2', 'b3'], ['b1', 'b2', 'b3']],
    ] as const) {
      const { messages } = await page(space.owner);
      const contents = messages.map((m) => m.content);
      expect([...contents].sort()).toEqual([...all]);
      expect(messages.map((m) => m.seq)).toEqual(all.map((_, i) => i + 1));
      const first = contents.indexOf(batched[0]);
      expect(contents.slice(first, first + batched.length)).toEqual([...batched]);
      for (const m of messages) {
        const sent = sends.findIndex(([s, , content]) => s === space && content === m.content);
        expect(m.id).toBe(reply(sent).messageId);
      }
      for (let i = 1; i < messages.length; i++)
        expect(messages[i]!.timestamp > messages[i - 1]!.timestamp).toBe(true);
    }
    await sdkError(page(closed.owner), AuthenticationError);

    // One statement, one transaction: the rows the second batch wrote share their xmin (on the
    // embedded database, the rows of the one batch).
    const result = await deps.db.execute(
      sql`select content, xmin::text as tx from messages where space_id in (${a.spaceId}, ${b.spaceId})`,
    );
    const tx = new Map(rowsOf<{ content: string; tx: string }>(result).map((r) => [r.content, r.tx]));
    expect(new Set(['b1', 'a2', 'a3', 'a4', 'b2', 'b3'].map((c) => tx.get(c))).size).toBe(1);
    expect(new Set(['a1', 'b1'].map((c) => tx.get(c))).size).toBe(embedded ? 1 : 2);
  });
});
