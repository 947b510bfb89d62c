import { describe, expect, it } from 'vitest';
import {
  AbortError,
  BadRequestError,
  ConveneError,
  MessageList,
  PendingJoin,
  type RequestOptions,
} from '../src';
import { hub, ownedSpace, participant } from './helpers';

describe('messages', () => {
  it('sends text as a string and other types as an object', async () => {
    const { owner } = await ownedSpace();
    const sent = await owner.messages.send('hello');
    expect(sent.messageId).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent.participants.length).toBe(1);
    await owner.messages.send({ content: '<b>bold</b>', type: 'html' });
    await expect(owner.messages.send({ content: 'not a url', type: 'image' })).rejects.toBeInstanceOf(
      BadRequestError,
    );
    const page = await owner.messages.list();
    expect(page.messages.map((m) => [m.content, m.type])).toEqual([
      ['hello', 'text'],
      ['<b>bold</b>', 'html'],
    ]);
    expect(page.messages[0]).toMatchObject({ id: sent.messageId, isOwner: true, seq: 1 });
  });

  it('lists a page when awaited and every message, oldest first, when iterated', async () => {
    const { owner } = await ownedSpace();
    const me = await participant(owner);
    const before = await me.messages.list();
    expect(before).toMatchObject({ messages: [] });
    const list = me.messages.list();
    expect(list).toBeInstanceOf(MessageList);
    for (const n of [1, 2, 3]) await owner.messages.send(`m${n}`);

    const seen: string[] = [];
    const all = me.messages.list();
    for await (const message of all) seen.push(message.content);
    expect(seen).toEqual(['m1', 'm2', 'm3']);
    // The cursor continues where the iteration stopped.
    await owner.messages.send('m4');
    const next: string[] = [];
    for await (const message of me.messages.list({ since: all.cursor })) next.push(message.content);
    expect(next).toEqual(['m4']);
    // `since` also takes a Date.
    const fromDate: string[] = [];
    for await (const m of me.messages.list({ since: new Date(0) })) fromDate.push(m.content);
    expect(fromDate).toEqual(['m1', 'm2', 'm3', 'm4']);
  });

  it('asks the server nothing until the list is read, and throws its refusal where it is read', async () => {
    const { owner, spaceId } = await ownedSpace();
    const asked: string[] = [];
    const counting = hub({
      fetch: (input, init) => {
        asked.push(String(input));
        return fetch(input, init);
      },
    });
    const refused = counting.space(spaceId, 'f'.repeat(64)).messages.list();
    const later = counting.space(spaceId, owner.key).messages.list();
    await owner.messages.send('sent after the list was made');
    // Nothing was asked (so no rejection was left unobserved meanwhile: vitest fails a test file
    // on an unhandled rejection).
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(asked).toEqual([]);
    await expect(
      (async () => {
        for await (const _ of refused);
      })(),
    ).rejects.toMatchObject({ status: 401, code: 'key_unknown' });
    // Read now, the list has what is there now.
    const seen: string[] = [];
    for await (const message of later) seen.push(message.content);
    expect(seen).toEqual(['sent after the list was made']);
    expect(asked).toHaveLength(3);
  });

  it('says a `since` that is no date-time by its own name, before asking the server', async () => {
    const { owner } = await ownedSpace();
    await owner.messages.send('hello');
    for (const since of ['yesterday', new Date('not a date')]) {
      const listed = await owner.messages.list({ since }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(listed).toBeInstanceOf(ConveneError);
      expect(listed).not.toBeInstanceOf(BadRequestError);
      expect((listed as Error).message).toMatch(/^since /);
      expect(() => owner.messages.stream({ since })).toThrow(/^since /);
    }
    // What looks like a date-time but is none is the server's to say, as a 400.
    await expect(owner.messages.list({ since: '2030-02-30T00:00:00Z' })).rejects.toBeInstanceOf(
      BadRequestError,
    );
  });

  it('follows the cursors across pages of 500', async () => {
    const { owner } = await ownedSpace();
    const total = 520;
    for (let n = 0; n < total; n += 20) {
      await Promise.all(Array.from({ length: 20 }, (_, i) => owner.messages.send(`#${n + i}`)));
    }
    const first = await owner.messages.list();
    expect(first.messages.length).toBe(500);
    const seqs: number[] = [];
    for await (const message of owner.messages.list()) seqs.push(message.seq);
    expect(seqs).toEqual(Array.from({ length: total }, (_, i) => i + 1));
  });

  it("adds a long poll's wait to the timeout, the call's as the client's", async () => {
    const { owner, spaceId } = await ownedSpace();
    // A second short of the wait: without the wait added, each poll would time out at 1 s. (With
    // 300 ms, an answer that a loaded machine took 0.3 s to hand over past the wait timed out.)
    const short = { timeoutMs: 1000, maxRetries: 0 };
    const shortClient = hub(short).space(spaceId, owner.key);
    // An empty space and inbox: each poll waits its full 2 s, beyond the 1 s timeout.
    const polls: [string, () => Promise<{ messages: unknown[] }>][] = [
      ['messages.list, timeoutMs per call', () => owner.messages.list({ wait: 2 }, short)],
      ['messages.list, timeoutMs of the client', () => shortClient.messages.list({ wait: 2 })],
      ['inbox.get, timeoutMs per call', () => owner.inbox.get({ wait: 2 }, short)],
      ['inbox.get, timeoutMs of the client', () => shortClient.inbox.get({ wait: 2 })],
    ];
    for (const [name, poll] of polls) {
      const started = Date.now();
      expect((await poll()).messages, name).toEqual([]);
      expect(Date.now() - started, name).toBeGreaterThanOrEqual(1900);
    }
  });
});

describe("a join's parameters among its request options", () => {
  it('are refused before anything is sent: a private join would have waited for approval', async () => {
    const { owner } = await ownedSpace(hub(), { privacy: 'private' });
    const { agentLink } = await owner.invitations.create();
    // As plain JavaScript passes it (TypeScript refuses it, sharing no property with them): it
    // was ignored, and the join waited.
    const options = { wait: false } as unknown as RequestOptions;
    const error = await hub()
      .join(agentLink, { name: 'Reviewer' }, options)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConveneError);
    expect((error as Error).message).toBe(
      'join: `wait` is one of its parameters, not a request option (the last argument), where it would be ignored',
    );
    const { participants } = await owner.get();
    expect(participants.map((p) => p.name)).not.toContain('Reviewer');
    // Where it belongs, it gives the pending join at once.
    expect(await hub().join(agentLink, { name: 'Reviewer', wait: false })).toBeInstanceOf(PendingJoin);
  });
});

describe("a message's fields among the request options", () => {
  it('are refused before anything is sent: the message would have gone without its reply', async () => {
    const { owner } = await ownedSpace();
    const { messageId } = await owner.messages.send('the question');
    // As plain JavaScript passes it: `send(text, { replyTo })` posted a plain message.
    const options = { replyTo: messageId } as unknown as RequestOptions;
    const pending = owner.messages.send('the answer', options);
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConveneError);
    expect((error as Error).message).toBe(
      'sendMessage: `replyTo` is one of its parameters, not a request option (the last argument), where it would be ignored',
    );
    expect((await owner.messages.list()).messages.map((m) => m.content)).toEqual(['the question']);
    // Where it belongs, it is a reply; the answer's response is there as for any call.
    const { data, response } = await owner.messages
      .send({ content: 'the answer', replyTo: messageId })
      .withResponse();
    expect(response.status).toBe(200);
    const [, reply] = (await owner.messages.list()).messages;
    expect(reply).toMatchObject({ id: data.messageId, replyTo: messageId });
  });
});

describe('a header value fetch cannot send', () => {
  it('is refused as a ConveneError naming the header and the call, never the value', async () => {
    const { owner } = await ownedSpace();
    for (const [options, header] of [
      [{ idempotencyKey: '🚀-42' }, 'Idempotency-Key'],
      [{ headers: { 'X-Trace': 'a\nb' } }, 'X-Trace'],
    ] as const) {
      const error = await owner.messages.send('x', options).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConveneError);
      expect(error).toMatchObject({
        message: `sendMessage: the ${header} header cannot be sent as given (a line break, or a character beyond Latin-1)`,
        operation: 'sendMessage',
        method: 'POST',
        mayHaveRun: false,
      });
    }
    // A key read with a line break inside: its value is never in the error.
    const secret = `${'a'.repeat(32)}\n${'b'.repeat(31)}`;
    const broken = await hub()
      .space(owner.spaceId, secret)
      .get()
      .catch((e: unknown) => e);
    expect((broken as Error).message).toBe(
      'getSpace: the X-Private-Key header cannot be sent as given (a line break, or a character beyond Latin-1)',
    );
    expect(JSON.stringify(broken)).not.toContain('aaaa');
    expect((await owner.messages.list()).messages).toEqual([]);
  });
});

describe('request options among the parameters', () => {
  it('refuses them, where they would be ignored (a signal meant to end a long poll)', async () => {
    const { owner } = await ownedSpace();
    const controller = new AbortController();
    // A plain object, not a literal: it compiles (no excess-property check), and was ignored.
    const options = { wait: 30, signal: controller.signal };
    const started = Date.now();
    for (const call of [() => owner.messages.list(options), () => owner.inbox.get(options)]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConveneError);
      expect((error as Error).message).toContain(
        '`signal` is a request option (the last argument: { signal }), not a parameter',
      );
    }
    expect(Date.now() - started).toBeLessThan(5_000);
    // Where it belongs, it ends the wait.
    setTimeout(() => controller.abort(), 100);
    await expect(owner.messages.list({ wait: 30 }, { signal: controller.signal })).rejects.toBeInstanceOf(
      AbortError,
    );
  });
});
