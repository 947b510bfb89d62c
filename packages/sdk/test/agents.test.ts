import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  BadRequestError,
  Convene,
  ConveneError,
  type MessageView,
  RateLimitError,
  type StreamEvent,
  verifyWebhook,
  WebhookVerificationError,
} from '../src';
import { closedPort, hub, ownedSpace, participant, until } from './helpers';

describe('mentions, replies and the inbox', () => {
  it('addresses messages and reads the inbox from the server’s read position', async () => {
    const { owner } = await ownedSpace();
    const ada = await participant(owner, 'Ada');
    const bob = await participant(owner, 'Bob');
    const mine = await ada.messages.send('my question');
    const explicit = await bob.messages.send({ content: 'for you', mentions: [ada.participantId!] });
    expect(explicit.mentions).toEqual([ada.participantId]);
    await bob.messages.send('hello @ada');
    await bob.messages.send({ content: 'an answer', replyTo: mine.messageId });
    await bob.messages.send('not for Ada');
    await expect(
      bob.messages.send({ content: 'x', mentions: ['00000000-0000-4000-8000-000000000000'] }),
    ).rejects.toBeInstanceOf(BadRequestError);

    const inbox = await ada.inbox.get();
    expect(inbox.messages.map((m) => m.content)).toEqual(['for you', 'hello @ada', 'an answer']);
    expect(inbox.messages[2]).toMatchObject({ replyTo: mine.messageId, mentions: [] });
    expect(inbox.unread).toEqual({ inbox: 3, mentions: 2, replies: 1, messages: 5 });
    const acked = await ada.inbox.ack(inbox.messages[1]!.seq);
    expect(acked).toMatchObject({ lastReadSeq: inbox.messages[1]!.seq, unread: { inbox: 1 } });
    // Another client with the same key (a restarted agent) resumes there.
    const restarted = hub().space(ada.spaceId, ada.key);
    expect((await restarted.inbox.get()).messages.map((m) => m.content)).toEqual(['an answer']);
    const view = await owner.get();
    expect(view.participants.find((p) => p.participantId === ada.participantId)).toMatchObject({
      lastReadSeq: inbox.messages[1]!.seq,
      lastSeenAt: expect.any(String),
    });
  });

  it('follows the inbox, acknowledging each message when the next is asked for', async () => {
    const { owner } = await ownedSpace();
    const agent = await participant(owner, 'Worker');
    await owner.messages.send('@Worker one');
    const seen: string[] = [];
    const controller = new AbortController();
    const following = (async () => {
      try {
        for await (const message of agent.inbox.follow({ wait: 20, signal: controller.signal })) {
          seen.push(message.content);
          if (message.content === '@Worker two') break;
        }
      } catch (error) {
        if (!controller.signal.aborted) throw error;
      }
    })();
    await until(() => (seen.length === 1 ? true : undefined));
    // Asked for the next one: 'one' is acknowledged, and the long poll wakes for 'two'.
    await until(async () => ((await agent.inbox.get()).lastReadSeq === 1 ? true : undefined));
    await owner.messages.send('@Worker two');
    await following;
    expect(seen).toEqual(['@Worker one', '@Worker two']);
    // Left with break while handling 'two': it stays unacknowledged for the next run.
    const next = await agent.inbox.get();
    expect(next.messages.map((m) => m.content)).toEqual(['@Worker two']);
  });

  it('return() while the long poll waits ends it at once, not when the poll answers', async () => {
    const { owner } = await ownedSpace();
    const agent = await participant(owner, 'Leaving');
    await owner.messages.send('@Leaving one');
    const following = agent.inbox.follow({ wait: 20 });
    expect((await following.next()).value).toMatchObject({ content: '@Leaving one' });
    // Asked for the next: 'one' is acknowledged, then the poll waits up to 20 s for another.
    const waiting = following.next();
    await until(async () => ((await agent.inbox.get()).lastReadSeq === 1 ? true : undefined));
    const started = Date.now();
    await following.return();
    expect(await waiting).toEqual({ done: true, value: undefined });
    expect(Date.now() - started).toBeLessThan(5_000);
    // Left by its caller, not ended by itself; what comes next waits for the next follow().
    expect(following.ended).toBeUndefined();
    await owner.messages.send('@Leaving two');
    expect((await agent.inbox.follow().next()).value).toMatchObject({ content: '@Leaving two' });
  });

  it('keeps following the inbox through polls that get no answer (a server restart)', async () => {
    const { owner } = await ownedSpace();
    const agent = await participant(owner, 'Steady');
    // After the first page, three inbox polls meet a refused connection, as while the server restarts.
    let polls = 0;
    const waits: (string | null)[] = [];
    const restarting: typeof fetch = async (input, init) => {
      const url = new URL(String(input));
      const poll = (init?.method ?? 'GET') === 'GET' && url.pathname.endsWith('/inbox');
      if (poll) waits.push(url.searchParams.get('wait'));
      if (poll && ++polls >= 2 && polls <= 4)
        throw new TypeError('fetch failed', {
          cause: Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' }),
        });
      return fetch(input, init);
    };
    // The client's own retries (2 by default) do not delay the loss's notice: the loop retries
    // itself, each failure told as it happens.
    const steady = hub({ fetch: restarting }).space(agent.spaceId, agent.key);
    await owner.messages.send('@Steady one');
    const seen: string[] = [];
    const disconnects: number[] = [];
    const reconnects: { attempts: number }[] = [];
    const following = (async () => {
      const hooks = {
        onDisconnect: ({ attempt }: { attempt: number }) => disconnects.push(attempt),
        onReconnect: (info: { attempts: number }) => reconnects.push(info),
      };
      for await (const message of steady.inbox.follow({ wait: 20, ...hooks })) {
        seen.push(message.content);
        if (message.content === '@Steady two') break;
      }
    })();
    following.catch(() => {});
    // Back as soon as the server answers, not when the next message ends a long wait: the polls
    // after a failure do not wait.
    await until(() => (reconnects.length > 0 ? true : undefined), 10_000);
    expect(seen).toEqual(['@Steady one']);
    await owner.messages.send('@Steady two');
    await following;
    expect(seen).toEqual(['@Steady one', '@Steady two']);
    expect(disconnects).toEqual([1, 2, 3]);
    expect(reconnects).toEqual([{ attempts: 3 }]);
    // The first read answers at once (a wrong key is said then), the next waits.
    expect(waits.slice(0, 6)).toEqual(['0', '20', '0', '0', '0', '20']);
  });

  it('waits out a 429 while following, as its Retry-After asks, and goes on: a pause, not a loss', async () => {
    const { owner } = await ownedSpace();
    const agent = await participant(owner, 'Limited');
    let polls = 0;
    let refusedAt = 0;
    const limited: typeof fetch = async (input, init) => {
      const poll = (init?.method ?? 'GET') === 'GET' && new URL(String(input)).pathname.endsWith('/inbox');
      if (poll && ++polls === 2) {
        refusedAt = Date.now();
        return new Response(JSON.stringify({ error: 'rate limit exceeded', code: 'rate_limited' }), {
          status: 429,
          headers: { 'content-type': 'application/json', 'retry-after': '1' },
        });
      }
      return fetch(input, init);
    };
    await owner.messages.send('@Limited one');
    const disconnects: number[] = [];
    const seen: string[] = [];
    let secondAt = 0;
    const following = (async () => {
      for await (const message of hub({ fetch: limited })
        .space(agent.spaceId, agent.key)
        .inbox.follow({ wait: 20, onDisconnect: ({ attempt }) => disconnects.push(attempt) })) {
        seen.push(message.content);
        if (seen.length === 2) {
          secondAt = Date.now();
          break;
        }
      }
    })();
    await until(() => (polls >= 3 ? true : undefined), 10_000);
    await owner.messages.send('@Limited two');
    await following;
    expect(seen).toEqual(['@Limited one', '@Limited two']);
    expect(disconnects).toEqual([]);
    expect(secondAt - refusedAt).toBeGreaterThanOrEqual(1000);
  });

  it('does not hammer a server whose 503 says Retry-After: 0: its backoff still holds', async () => {
    const { owner } = await ownedSpace();
    const agent = await participant(owner, 'Gentle');
    let polls = 0;
    let down = false;
    const refusing: typeof fetch = async (input, init) => {
      const poll = (init?.method ?? 'GET') === 'GET' && new URL(String(input)).pathname.endsWith('/inbox');
      if (poll && ++polls >= 2 && down)
        return new Response(JSON.stringify({ error: 'unavailable', code: 'unavailable' }), {
          status: 503,
          headers: { 'content-type': 'application/json', 'retry-after': '0' },
        });
      return fetch(input, init);
    };
    await owner.messages.send('@Gentle one');
    const controller = new AbortController();
    const iterator = hub({ fetch: refusing })
      .space(agent.spaceId, agent.key)
      .inbox.follow({ signal: controller.signal });
    expect((await iterator.next()).value).toMatchObject({ content: '@Gentle one' });
    down = true;
    const next = iterator.next();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    controller.abort();
    await next;
    // 0.5, 1 and 2 s of backoff (less up to a quarter): four polls at most in 2 s, not hundreds.
    expect(polls).toBeLessThanOrEqual(6);
  });

  it('fails its first read as any call, after the client’s retries (a stream’s first connection too): a wrong URL, a proxy’s 502, a server cut off', async () => {
    const { owner } = await ownedSpace();
    const agent = await participant(owner, 'Early');
    // The first poll is cut off (a server killed while it answered), the next refused (it is
    // down), the next answered 503 (shutting down again): within the client's retries, the
    // follow starts once the server answers, and no outage is reported (nothing was live yet).
    let polls = 0;
    const cut: typeof fetch = async (input, init) => {
      const poll = (init?.method ?? 'GET') === 'GET' && new URL(String(input)).pathname.endsWith('/inbox');
      if (poll && ++polls === 1)
        throw new TypeError('fetch failed', { cause: new Error('other side closed') });
      if (poll && polls === 2)
        throw new TypeError('fetch failed', {
          cause: Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' }),
        });
      if (poll && polls === 3)
        return new Response(
          JSON.stringify({ error: 'the server is shutting down; retry shortly', code: 'shutting_down' }),
          {
            status: 503,
            headers: { 'content-type': 'application/json', 'retry-after': '0' },
          },
        );
      return fetch(input, init);
    };
    const disconnects: number[] = [];
    const early = hub({ fetch: cut, maxRetries: 3 }).space(agent.spaceId, agent.key);
    const following = (async () => {
      for await (const message of early.inbox.follow({
        wait: 20,
        onDisconnect: ({ attempt }) => disconnects.push(attempt),
      }))
        return message.content;
    })();
    await until(() => (polls >= 4 ? true : undefined), 10_000);
    await owner.messages.send('@Early after the restart');
    await expect(following).resolves.toBe('@Early after the restart');
    expect(disconnects).toEqual([]);

    // Past the retries: the last error, at once, as a stream's first connection throws it.
    const proxy: typeof fetch = async () =>
      new Response('<html><body>502 Bad Gateway</body></html>', {
        status: 502,
        headers: { 'content-type': 'text/html' },
      });
    const behindProxy = hub({ fetch: proxy, maxRetries: 1 }).space(agent.spaceId, agent.key);
    const started = Date.now();
    await expect(
      behindProxy.inbox.follow({ onDisconnect: () => disconnects.push(-1) }).next(),
    ).rejects.toMatchObject({
      status: 502,
    });
    await expect(behindProxy.messages.stream()[Symbol.asyncIterator]().next()).rejects.toMatchObject({
      status: 502,
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(disconnects).toEqual([]);

    // Refused from the start: a wrong URL, said at once.
    const port = await closedPort();
    const nowhere = new Convene({ baseUrl: `http://127.0.0.1:${port}`, maxRetries: 0, logLevel: 'off' });
    const first = nowhere.space(agent.spaceId, agent.key).inbox.follow().next();
    await expect(first).rejects.toMatchObject({
      name: 'ConnectionError',
      code: 'ECONNREFUSED',
      mayHaveRun: false,
    });
  });

  it('stops following the inbox without an error when its signal aborts', async () => {
    const { owner } = await ownedSpace();
    const agent = await participant(owner, 'Idle');
    const controller = new AbortController();
    const seen: string[] = [];
    const loop = agent.inbox.follow({ wait: 20, signal: controller.signal });
    const following = (async () => {
      for await (const message of loop) seen.push(message.content);
      return 'ended';
    })();
    setTimeout(() => controller.abort(), 200);
    await expect(following).resolves.toBe('ended');
    expect(seen).toEqual([]);
    expect(loop.ended).toEqual({ reason: 'aborted' });
  });

  it('ends following the inbox without an error, as a stream ends, once the key is refused (kicked, left, closed)', async () => {
    for (const end of ['kick', 'leave', 'close'] as const) {
      const { owner } = await ownedSpace();
      const agent = await participant(owner, `Ends by ${end}`);
      await owner.messages.send(`@Ends by ${end} first`);
      const loop = agent.inbox.follow({ wait: 20 });
      const seen: string[] = [];
      const following = (async () => {
        for await (const message of loop) {
          seen.push(message.content);
          if (end === 'kick') await owner.participants.kick(agent.participantId!);
          else if (end === 'leave') await agent.leave();
          else await owner.close();
        }
        return 'ended';
      })();
      await expect(following).resolves.toBe('ended');
      expect(seen).toEqual([`@Ends by ${end} first`]);
      // Why: the server's refusal, whose code says which, as the stream says it.
      expect(loop.ended?.reason).toBe({ kick: 'kicked', leave: 'left', close: 'closed' }[end]);
      expect(loop.ended?.error?.code).toBe(
        { kick: 'participant_removed', leave: 'participant_left', close: 'space_closed' }[end],
      );
      expect(loop.ended?.error?.status).toBe(end === 'close' ? 409 : 401);
      if (end !== 'close') expect(loop.ended?.error).toBeInstanceOf(AuthenticationError);
    }
    // A key refused from the start is a wrong key: thrown, as a stream's first connection.
    const { owner } = await ownedSpace();
    const wrong = hub().space((await owner.get()).spaceId, 'f'.repeat(64));
    await expect(wrong.inbox.follow().next()).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('gives up its first read past the client’s retries, as a stream’s first connection: a shutdown’s 503, then refused', async () => {
    const { owner } = await ownedSpace();
    const agent = await participant(owner, 'Patient');
    let polls = 0;
    const restarting: typeof fetch = async (input, init) => {
      const poll = (init?.method ?? 'GET') === 'GET' && new URL(String(input)).pathname.endsWith('/inbox');
      if (poll && ++polls === 1)
        return new Response(
          JSON.stringify({ error: 'the server is shutting down; retry shortly', code: 'shutting_down' }),
          {
            status: 503,
            headers: { 'content-type': 'application/json', 'retry-after': '0' },
          },
        );
      if (poll && polls <= 3)
        throw new TypeError('fetch failed', {
          cause: Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' }),
        });
      return fetch(input, init);
    };
    // maxRetries 2: three attempts, all failed; the error of the last.
    const patient = hub({ fetch: restarting, maxRetries: 2 }).space(agent.spaceId, agent.key);
    await expect(patient.inbox.follow({ wait: 20 }).next()).rejects.toMatchObject({
      name: 'ConnectionError',
      code: 'ECONNREFUSED',
    });
    expect(polls).toBe(3);
    // Called again once the server is back, it follows.
    await owner.messages.send('@Patient back');
    for await (const message of patient.inbox.follow({ wait: 20 })) {
      expect(message.content).toBe('@Patient back');
      break;
    }
  });

  it('long-polls messages with wait', async () => {
    const { owner } = await ownedSpace();
    const reader = await participant(owner, 'Reader');
    const first = await reader.messages.list();
    // Read at once (a list asks when it is read), so the poll is waiting when the message comes.
    const waiting = reader.messages.list({ since: first.cursor, wait: 20 }).withResponse();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const sent = await owner.messages.send('news');
    const page = (await waiting).data;
    expect(page.messages.map((m: MessageView) => m.id)).toEqual([sent.messageId]);
  });

  it('throttles a sender beyond the space’s budget', async () => {
    const { owner } = await ownedSpace();
    const agent = await participant(owner, 'Loop', hub({ maxRetries: 0 }));
    await owner.update({ maxMessagesPerMinute: 2 });
    expect((await owner.get()).maxMessagesPerMinute).toBe(2);
    await agent.messages.send('1');
    await agent.messages.send('2');
    const refused = await agent.messages.send('3').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RateLimitError);
    expect((refused as RateLimitError).retryAfter).toBeGreaterThan(0);
    await owner.messages.send('the owner still talks');
  });
});

describe('webhooks', () => {
  it('creates, lists and deletes a webhook, and verifies its signed deliveries', async () => {
    const received: { headers: IncomingHttpHeaders; body: string }[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const { owner } = await ownedSpace();
      const agent = await participant(owner, 'Hooked');
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const created = await agent.webhooks.create({ url, events: ['mention'] });
      expect(created).toMatchObject({ url, events: ['mention'], enabled: true, failures: 0 });
      expect(created.secret).toMatch(/^whsec_/);
      const listed = await agent.webhooks.list();
      expect(listed.webhooks.map((w) => w.id)).toEqual([created.id]);
      expect(listed.webhooks[0]).not.toHaveProperty('secret');

      await owner.messages.send('nothing for the agent');
      const sent = await owner.messages.send('@Hooked over to you');
      await until(() => (received.length > 0 ? true : undefined));
      const [delivery] = received;
      const payload = await verifyWebhook({
        body: delivery!.body,
        headers: delivery!.headers as Record<string, string>,
        secret: created.secret,
      });
      expect(payload).toMatchObject({
        type: 'mention',
        spaceId: agent.spaceId,
        data: { id: sent.messageId },
      });
      // The body as its bytes, as frameworks hand it over (a Buffer, a Uint8Array, an ArrayBuffer).
      const bytes = new TextEncoder().encode(delivery!.body);
      for (const body of [Buffer.from(bytes), bytes, bytes.slice().buffer]) {
        await expect(
          verifyWebhook({
            body,
            headers: delivery!.headers as Record<string, string>,
            secret: created.secret,
          }),
        ).resolves.toEqual(payload);
      }
      await expect(
        verifyWebhook({
          body: new TextEncoder().encode(`${delivery!.body} `),
          headers: delivery!.headers as Record<string, string>,
          secret: created.secret,
        }),
      ).rejects.toThrow('no valid signature');
      // Parsed already (express.json()'s object): the receiver's mistake, said as such (a plain
      // ConveneError, as a missing secret is), not a forged delivery nor a TypeError.
      const parsed = await verifyWebhook({
        body: JSON.parse(delivery!.body),
        headers: delivery!.headers as Record<string, string>,
        secret: created.secret,
      }).catch((error: unknown) => error);
      expect(parsed).toBeInstanceOf(ConveneError);
      expect(parsed).not.toBeInstanceOf(WebhookVerificationError);
      expect((parsed as Error).message).toBe('verifyWebhook needs { body, headers, secret }');
      // Tampered, signed with another secret, or replayed later: refused.
      await expect(
        verifyWebhook({
          body: `${delivery!.body} `,
          headers: delivery!.headers as Record<string, string>,
          secret: created.secret,
        }),
      ).rejects.toBeInstanceOf(WebhookVerificationError);
      const other = await agent.webhooks.create({ url: `${url}/other` });
      await expect(
        verifyWebhook({
          body: delivery!.body,
          headers: delivery!.headers as Record<string, string>,
          secret: other.secret,
        }),
      ).rejects.toBeInstanceOf(WebhookVerificationError);
      await expect(
        verifyWebhook({
          body: delivery!.body,
          headers: delivery!.headers as Record<string, string>,
          secret: created.secret,
          now: new Date(Date.now() + 3_600_000),
        }),
      ).rejects.toThrow(/too far/);

      expect(await agent.webhooks.delete(created.id)).toEqual({ ok: true });
      expect((await agent.webhooks.list()).webhooks.map((w) => w.id)).toEqual([other.id]);
      await expect(agent.webhooks.create({ url: 'http://10.0.0.1/hook' })).rejects.toBeInstanceOf(
        BadRequestError,
      );
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it('says that a secret is not a webhook secret (unset, cut, or another value) rather than a DOMException', async () => {
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': 'v1,AAAA',
    };
    const cases = [
      { secret: '', headers },
      { secret: 'whsec_', headers },
      { secret: 'whsec_not base64!', headers },
      // Base64 without the prefix, and a secret cut short: keys no delivery of Convene's would match.
      { secret: 'notasecret', headers },
      { secret: `whsec_${Buffer.alloc(12).toString('base64')}`, headers },
      // Said before the delivery is looked at, so a request without the headers does not hide it.
      { secret: '', headers: {} },
    ];
    for (const { secret, headers } of cases) {
      const error = await verifyWebhook({ body: '{}', headers, secret }).catch((e: unknown) => e);
      // The receiver's configuration, not the delivery: not a WebhookVerificationError (a 400 to send back).
      expect(error).toBeInstanceOf(ConveneError);
      expect(error).not.toBeInstanceOf(WebhookVerificationError);
      expect((error as Error).message).toMatch(/not a webhook secret \(whsec_, base64 of 24 bytes or more\)/);
    }
    // A whole secret with the headers missing is the delivery's fault.
    const whole = `whsec_${Buffer.alloc(24, 1).toString('base64')}`;
    await expect(verifyWebhook({ body: '{}', headers: {}, secret: whole })).rejects.toBeInstanceOf(
      WebhookVerificationError,
    );
  });

  it('tells the stream when a webhook is disabled (webhook-disabled)', async () => {
    // A receiver that answers 410 Gone has its webhook disabled at once.
    const receiver = createServer((_req, res) => res.writeHead(410).end());
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const { owner } = await ownedSpace();
      const agent = await participant(owner, 'Gone');
      const controller = new AbortController();
      const events: StreamEvent[] = [];
      const done = (async () => {
        for await (const event of owner.messages.stream({ signal: controller.signal })) events.push(event);
      })();
      done.catch(() => {});
      const hook = await owner.webhooks.create({
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/gone`,
        events: ['message'],
      });
      await agent.messages.send('for the owner’s webhook');
      const disabled = await until(() => events.find((e) => e.event === 'webhook-disabled'));
      controller.abort();
      await done;
      expect(disabled).toMatchObject({
        event: 'webhook-disabled',
        id: expect.any(Number),
        data: { webhookId: hook.id, participantId: owner.participantId },
      });
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});
