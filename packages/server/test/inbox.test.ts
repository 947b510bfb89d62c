import { beforeAll, describe, expect, it } from 'vitest';
import {
  expectError,
  expectKeyChecks,
  expectOk,
  Harness,
  type SpaceFixture,
  startTestServer,
  useServer,
} from './helpers';
import { WaitWatcher } from './helpers/waits';

const { srv, h } = useServer();
let waits: WaitWatcher;
beforeAll(() => {
  waits = new WaitWatcher(srv);
});

const send = (space: SpaceFixture, key: string, body: Record<string, unknown>) =>
  h.post(`/hub/space/${space.spaceId}/messages`, { key, body });
const inbox = (space: SpaceFixture, key: string, query = '') =>
  h.get(`/hub/space/${space.spaceId}/inbox${query}`, { key });
const ack = (space: SpaceFixture, key: string, seq: unknown) =>
  h.post(`/hub/space/${space.spaceId}/inbox/ack`, { key, body: { seq } });

/** A space with its owner (Olga) and two participants, Ada and Bob. */
async function trio() {
  const space = await h.createSpace({ ownerName: 'Olga' });
  const ada = await h.joinActive(space, { name: 'Ada Lovelace' });
  const bob = await h.joinActive(space, { name: 'Bob' });
  return { space, ada, bob };
}

describe('mentions and replies', () => {
  it('records explicit mentions and replyTo on the message, in every view of it', async () => {
    const { space, ada, bob } = await trio();
    const first = await send(space, ada.key, { content: 'Can someone review?' });
    expectOk(first);
    const reply = await send(space, bob.key, {
      content: 'On it',
      mentions: [ada.participantId, space.ownerId],
      replyTo: first.body.messageId,
    });
    expectOk(reply);
    expect(reply.body.mentions).toEqual([ada.participantId, space.ownerId].sort());

    const listed = await h.get(`/hub/space/${space.spaceId}/messages`, { key: bob.key });
    expect(listed.body.messages[0]).toMatchObject({ mentions: [] });
    expect(listed.body.messages[0].replyTo).toBeUndefined();
    expect(listed.body.messages[1]).toMatchObject({
      id: reply.body.messageId,
      mentions: [ada.participantId, space.ownerId].sort(),
      replyTo: first.body.messageId,
    });
  });

  it('resolves @Name in text to mentions: exact name, any case, the longest name that fits', async () => {
    const { space, ada, bob } = await trio();
    const both = await send(space, space.ownerKey, { content: 'hi @ada lovelace and @BOB!' });
    expectOk(both);
    expect(both.body.mentions).toEqual([ada.participantId, bob.participantId].sort());
    // Not a name that merely starts the same, not an e-mail address, not in html or image content.
    const none = await send(space, space.ownerKey, { content: '@Bobby mail bob@example.com @Ada' });
    expect(none.body.mentions).toEqual([]);
    const html = await send(space, space.ownerKey, { content: '<b>@Bob</b>', type: 'html' });
    expect(html.body.mentions).toEqual([]);
    // A name at the very end, and one explicit mention repeated by name, counted once.
    const end = await send(space, ada.key, { content: 'thanks @bob', mentions: [bob.participantId] });
    expect(end.body.mentions).toEqual([bob.participantId]);
  });

  it('resolves @Name typed in another Unicode normal form (NFD, as macOS gives it) to the same participant', async () => {
    const { space } = await trio();
    const zoe = await h.joinActive(space, { name: 'Zoë' });
    // Someone whose name is the decomposed form's start: a combining mark continues a name.
    await h.joinActive(space, { name: 'Zoe' });
    const decomposed = await send(space, space.ownerKey, { content: 'hi @Zoe\u0308, welcome' });
    expectOk(decomposed);
    expect(decomposed.body.mentions).toEqual([zoe.participantId]);
    // The text is kept as it was sent.
    const listed = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    expect(listed.body.messages.at(-1).content).toBe('hi @Zoe\u0308, welcome');
    // A name given decomposed (a macOS file name) is kept composed: either form of text finds it.
    const rene = await h.joinActive(space, { name: 'Rene\u0301' });
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    const kept = view.body.participants.find(
      (p: { participantId: string }) => p.participantId === rene.participantId,
    );
    expect(kept.name).toBe('René');
    for (const content of ['@René, hi', '@Rene\u0301, hi']) {
      const sent = await send(space, space.ownerKey, { content });
      expect(sent.body.mentions).toEqual([rene.participantId]);
    }
  });

  it('refuses a mention of someone not in the space and a reply to no message of it, writing nothing', async () => {
    const { space, ada, bob } = await trio();
    const other = await h.createSpace();
    const elsewhere = await send(other, other.ownerKey, { content: 'elsewhere' });
    const left = await h.joinActive(space, { name: 'Leaver' });
    expectOk(await h.post(`/hub/space/${space.spaceId}/leave`, { key: left.key }));

    for (const body of [
      { content: 'x', mentions: [other.ownerId] },
      { content: 'x', mentions: [left.participantId] },
      { content: 'x', mentions: ['not-a-uuid'] },
      { content: 'x', replyTo: elsewhere.body.messageId },
      { content: 'x', replyTo: '00000000-0000-4000-8000-000000000000' },
      { content: 'x', mentions: Array.from({ length: 51 }, () => ada.participantId) },
    ]) {
      const res = await send(space, ada.key, body);
      expectError(res, 400);
    }
    const listed = await h.get(`/hub/space/${space.spaceId}/messages`, { key: ada.key });
    expect(listed.body.messages).toEqual([]);
    // The refusals still say why in their own words.
    const bad = await send(space, ada.key, { content: 'x', mentions: [other.ownerId] });
    expect(bad.body.error).toBe(
      `mentions: ${other.ownerId} is not a current participant of this space (active or muted)`,
    );
    // And name the field, as a malformed one's 400 does: which mention names nobody here.
    const second = await send(space, ada.key, {
      content: 'x',
      mentions: [bob.participantId, left.participantId],
    });
    expectError(second, 400);
    expect(second.body.issues).toEqual([
      {
        path: ['mentions', 1],
        message: `${left.participantId} is not a current participant of this space (active or muted)`,
      },
    ]);
    const reply = await send(space, ada.key, {
      content: 'x',
      replyTo: '00000000-0000-4000-8000-000000000000',
    });
    expect(reply.body.issues).toEqual([
      { path: ['replyTo'], message: 'replyTo names no message of this space' },
    ]);
  });

  it('answers each message of a concurrent batch on its own: good ones are written, bad ones refused', async () => {
    const { space, ada, bob } = await trio();
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        send(space, i % 2 ? ada.key : bob.key, {
          content: `m${i} @Olga`,
          ...(i % 3 === 0 ? { mentions: ['00000000-0000-4000-8000-000000000000'] } : {}),
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(
      Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? 400 : 200)),
    );
    const listed = await h.get(`/hub/space/${space.spaceId}/messages`, { key: ada.key });
    expect(listed.body.messages).toHaveLength(8);
    expect(listed.body.messages.map((m: any) => m.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    for (const m of listed.body.messages) expect(m.mentions).toEqual([space.ownerId]);
  });
});

describe('inbox', () => {
  it('holds what mentions you or replies to you, after your position, with unread counts', async () => {
    const { space, ada, bob } = await trio();
    const question = await send(space, ada.key, { content: 'Who has the numbers?' });
    await send(space, bob.key, { content: 'chatter' });
    const answer = await send(space, bob.key, { content: 'I do', replyTo: question.body.messageId });
    const ping = await send(space, space.ownerKey, { content: '@Ada Lovelace please check' });
    // Your own mention of yourself is not news to you.
    await send(space, ada.key, { content: 'note to self', mentions: [ada.participantId] });

    const res = await inbox(space, ada.key);
    expectOk(res);
    expect(res.body.messages.map((m: any) => m.id)).toEqual([answer.body.messageId, ping.body.messageId]);
    expect(res.body).toMatchObject({
      lastReadSeq: 0,
      unread: { inbox: 2, mentions: 1, replies: 1, messages: 5 },
    });
    // Bob's inbox is empty; the owner's too.
    expect((await inbox(space, bob.key)).body.messages).toEqual([]);
    expect((await inbox(space, space.ownerKey)).body.unread).toEqual({
      inbox: 0,
      mentions: 0,
      replies: 0,
      messages: 5,
    });
  });

  it('moves the position only forward; a restarted reader gets exactly what it had not acknowledged', async () => {
    const { space, ada, bob } = await trio();
    const seqs: number[] = [];
    for (let i = 0; i < 4; i++) {
      const sent = await send(space, bob.key, { content: `@Ada Lovelace ${i}` });
      expectOk(sent);
    }
    const first = await inbox(space, ada.key);
    for (const m of first.body.messages) seqs.push(m.seq);
    expect(seqs).toEqual([1, 2, 3, 4]);

    const acked = await ack(space, ada.key, 2);
    expectOk(acked);
    expect(acked.body).toEqual({
      lastReadSeq: 2,
      unread: { inbox: 2, mentions: 2, replies: 0, messages: 2 },
    });
    // "Crash" and read again: 3 and 4 only.
    expect((await inbox(space, ada.key)).body.messages.map((m: any) => m.seq)).toEqual([3, 4]);
    // A late, lower acknowledgement changes nothing.
    expect((await ack(space, ada.key, 1)).body.lastReadSeq).toBe(2);
    expect((await ack(space, ada.key, 4)).body.lastReadSeq).toBe(4);
    expect((await inbox(space, ada.key)).body).toMatchObject({ messages: [], lastReadSeq: 4 });

    // The position is visible to everyone, as lastReadSeq on ParticipantView.
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: bob.key });
    expect(view.body.participants.find((p: any) => p.participantId === ada.participantId)).toMatchObject({
      lastReadSeq: 4,
    });
  });

  it('pages with after and limit without acknowledging', async () => {
    const { space, ada, bob } = await trio();
    for (let i = 0; i < 5; i++) await send(space, bob.key, { content: 'x', mentions: [ada.participantId] });
    const page = await inbox(space, ada.key, '?limit=2');
    expect(page.body.messages.map((m: any) => m.seq)).toEqual([1, 2]);
    const next = await inbox(space, ada.key, '?limit=2&after=2');
    expect(next.body.messages.map((m: any) => m.seq)).toEqual([3, 4]);
    expect(next.body.lastReadSeq).toBe(0);
    expectError(await inbox(space, ada.key, '?limit=0'), 400);
    expectError(await inbox(space, ada.key, '?limit=501'), 400);
    expectError(await inbox(space, ada.key, '?after=-1'), 400);
  });

  it('refuses an acknowledgement past the last message, or that is not a seq', async () => {
    const { space, ada, bob } = await trio();
    await send(space, bob.key, { content: 'one' });
    const beyond = await ack(space, ada.key, 2);
    expectError(beyond, 400);
    expect(beyond.body.error).toBe('seq 2 is after the last message of the space (1)');
    for (const seq of [-1, 1.5, '1', null]) expectError(await ack(space, ada.key, seq), 400);
    expectError(await h.post(`/hub/space/${space.spaceId}/inbox/ack`, { key: ada.key, body: {} }), 400);
    expect((await inbox(space, ada.key)).body.lastReadSeq).toBe(0);
  });

  it('is for the owner and participants only; muted ones read and acknowledge, dead keys do not', async () => {
    const { space, ada } = await trio();
    const invitation = await h.invite(space);
    for (const check of [
      { method: 'GET' as const, path: `/hub/space/${space.spaceId}/inbox` },
      { method: 'POST' as const, path: `/hub/space/${space.spaceId}/inbox/ack`, body: { seq: 0 } },
    ]) {
      await expectKeyChecks(h, { ...check, wrongKeys: { invitation, ...(await h.deadKeys(space)) } });
    }
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${ada.participantId}/mute`, {
        key: space.ownerKey,
      }),
    );
    expectOk(await inbox(space, ada.key));
    expectOk(await ack(space, ada.key, 0));
    expectError(await inbox({ ...space, spaceId: '00000000-0000-4000-8000-000000000000' }, ada.key), 404);
    expectOk(await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
    expectError(await inbox(space, ada.key), 401);
    expectError(await ack(space, ada.key, 0), 409);
  });
});

describe('long polls', () => {
  it('answer an inbox wait as soon as something for you arrives, and ignore the rest', async () => {
    const { space, ada, bob } = await trio();
    const waiting = inbox(space, ada.key, '?wait=30');
    await waits.waiting(space.spaceId);
    await send(space, bob.key, { content: 'not for Ada' });
    const sent = await send(space, bob.key, { content: 'hey @ada lovelace' });
    const res = await waiting;
    expectOk(res);
    // Only what is for Ada, and so woken by it (a wait that times out answers nothing).
    expect(res.body.messages.map((m: any) => m.id)).toEqual([sent.body.messageId]);
  });

  it('answer listMessages with wait as soon as a message arrives, or empty when the time is up', async () => {
    const space = await h.createSpace();
    const first = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    const waiting = h.get(
      `/hub/space/${space.spaceId}/messages?wait=20&timestamp=${encodeURIComponent(first.body.cursor)}`,
      {
        key: space.ownerKey,
      },
    );
    await waits.waiting(space.spaceId);
    const sent = await send(space, space.ownerKey, { content: 'now' });
    const res = await waiting;
    expectOk(res);
    expect(res.body.messages.map((m: any) => m.id)).toEqual([sent.body.messageId]);

    const started = Date.now();
    const empty = await h.get(
      `/hub/space/${space.spaceId}/messages?wait=1&timestamp=${encodeURIComponent(res.body.cursor)}`,
      { key: space.ownerKey },
    );
    expectOk(empty);
    expect(empty.body.messages).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('answer a wait at once when something is there, and refuse a wait over 60 s or not a number', async () => {
    const space = await h.createSpace();
    await send(space, space.ownerKey, { content: 'there' });
    const started = Date.now();
    const res = await h.get(`/hub/space/${space.spaceId}/messages?wait=30`, { key: space.ownerKey });
    expect(res.body.messages).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(20_000);
    for (const wait of ['61', '-1', 'soon']) {
      expectError(
        await h.get(`/hub/space/${space.spaceId}/messages?wait=${wait}`, { key: space.ownerKey }),
        400,
      );
      expectError(await inbox(space, space.ownerKey, `?wait=${wait}`), 400);
    }
    // A refused key is refused at once, not after the wait.
    const refused = Date.now();
    expectError(await h.get(`/hub/space/${space.spaceId}/messages?wait=30`, { key: 'f'.repeat(64) }), 401);
    expect(Date.now() - refused).toBeLessThan(20_000);
  });

  it('end a wait with 503 and Retry-After when the server shuts down meanwhile, not with "nothing new"', async () => {
    const node = await startTestServer();
    const watcher = new WaitWatcher(node);
    const other = new Harness(node.url);
    const space = await other.createSpace();
    const waiting = other.get(`/hub/space/${space.spaceId}/inbox?wait=30`, { key: space.ownerKey });
    await watcher.waiting(space.spaceId);
    const started = Date.now();
    await node.close();
    const res = await waiting;
    // Coded apart from the other 503s: the wait did not run to its end, so nothing was read.
    expectError(res, 503, 'shutting_down');
    expect(res.body.error).toBe('the server is shutting down; retry shortly');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    // Not to be reused: the close, which waits for the connections busy when it began, is not
    // kept waiting for the client to drop this one (it hung 30 s on PostgreSQL at times).
    expect(res.headers.get('connection')).toBe('close');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('end a wait with 401 when the space expires meanwhile, at its expiry, not with "nothing new" later', async () => {
    const space = await h.createSpace({ ttl: 2 });
    const first = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    const started = Date.now();
    const [messages, mentions] = await Promise.all([
      h.get(
        `/hub/space/${space.spaceId}/messages?wait=30&timestamp=${encodeURIComponent(first.body.cursor)}`,
        { key: space.ownerKey },
      ),
      inbox(space, space.ownerKey, '?wait=30'),
    ]);
    for (const res of [messages, mentions]) {
      expectError(res, 401, 'space_expired');
      expect(res.body.error).toBe('space has expired: its keys no longer work');
    }
    // Woken by the expiry (2 s from its creation), not by the end of the 30 s wait.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('end a wait with 401 when the space closes meanwhile', async () => {
    const { space, ada } = await trio();
    const waiting = inbox(space, ada.key, '?wait=30');
    await waits.waiting(space.spaceId);
    expectOk(await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
    expectError(await waiting, 401);
  });
});
