import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectError,
  expectKeyChecks,
  expectOk,
  recordedEvents,
  type SpaceFixture,
  useServer,
  withServer,
} from './helpers';
import { WebhookReceiver } from './helpers/webhook-receiver';

// Loopback is allowed here for the test receiver alone; everything else non-public is refused.
const { srv, h } = useServer({
  config: {
    webhookUrls: { allowPrivate: false, allowNetworks: ['127.0.0.1'] },
    webhookRetryDelaysMs: [300, 300],
    webhookPollMs: 1000,
  },
});

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await WebhookReceiver.start();
});
afterAll(() => receiver.close());

const hooks = (space: SpaceFixture) => `/hub/space/${space.spaceId}/webhooks`;
const send = (space: SpaceFixture, key: string, body: Record<string, unknown>) =>
  h.post(`/hub/space/${space.spaceId}/messages`, { key, body });

/** A receiver URL unique to one test, so tests never read each other's deliveries. */
const path = (name: string) => `${receiver.url}/${name}`;

describe('createWebhook, listWebhooks, deleteWebhook', () => {
  it('registers a webhook, answers its secret once, lists and deletes it', async () => {
    const space = await h.createSpace();
    const guest = await h.joinActive(space);
    const created = await h.post(hooks(space), {
      key: guest.key,
      body: { url: path('crud'), events: ['mention', 'space-closed'] },
    });
    expectOk(created, 201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      participantId: guest.participantId,
      url: path('crud'),
      events: ['mention', 'space-closed'],
      createdAt: expect.stringMatching(/^\d{4}-/),
      enabled: true,
      failures: 0,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/),
    });
    const listed = await h.get(hooks(space), { key: guest.key });
    expectOk(listed);
    const { secret: _secret, ...view } = created.body;
    expect(listed.body).toEqual({ webhooks: [view] });
    // The owner sees every participant's webhooks; another participant sees only their own.
    expect((await h.get(hooks(space), { key: space.ownerKey })).body.webhooks).toHaveLength(1);
    const other = await h.joinActive(space, { name: 'Other' });
    expect((await h.get(hooks(space), { key: other.key })).body.webhooks).toEqual([]);
    expectError(await h.delete(`${hooks(space)}/${created.body.id}`, { key: other.key }), 404);

    expectOk(await h.delete(`${hooks(space)}/${created.body.id}`, { key: guest.key }));
    expect((await h.get(hooks(space), { key: guest.key })).body.webhooks).toEqual([]);
    expectError(await h.delete(`${hooks(space)}/${created.body.id}`, { key: guest.key }), 404);
    expectError(await h.delete(`${hooks(space)}/not-a-uuid`, { key: guest.key }), 404);
  });

  it('refuses bad input, unknown event types and keys that may not', async () => {
    const space = await h.createSpace();
    for (const body of [
      {},
      { url: 'not a url' },
      { url: 'ftp://example.com/x' },
      { url: 'http://user:secret@93.184.216.34/x' },
      { url: path('x'), events: [] },
      { url: path('x'), events: ['context'] },
      { url: `https://93.184.216.34/${'a'.repeat(2000)}` },
    ]) {
      expectError(await h.post(hooks(space), { key: space.ownerKey, body }), 400);
    }
    const invitation = await h.invite(space);
    await expectKeyChecks(h, {
      method: 'POST',
      path: hooks(space),
      body: { url: path('x') },
      wrongKeys: { invitation, ...(await h.deadKeys(space)) },
    });
    await expectKeyChecks(h, { method: 'GET', path: hooks(space), wrongKeys: { invitation } });
    expect((await h.get(hooks(space), { key: space.ownerKey })).body.webhooks).toEqual([]);
  });

  it('never points at loopback, private or link-local addresses (SSRF)', async () => {
    const space = await h.createSpace();
    for (const url of [
      'http://10.0.0.1/hook',
      'http://192.168.1.10/hook',
      'http://172.16.0.1/hook',
      'http://169.254.169.254/latest/meta-data/',
      'http://100.64.0.1/hook',
      'http://127.0.0.2/hook',
      'http://[::1]/hook',
      'http://[fd00::1]/hook',
      'http://[fe80::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://[::127.0.0.1]/hook',
    ]) {
      const res = await h.post(hooks(space), { key: space.ownerKey, body: { url } });
      expectError(res, 400);
      expect(res.body.error).toMatch(/loopback, private and link-local addresses are not allowed/);
      // Its own code: the operator can lift it, which a client may say (the CLI does).
      expect(res.body.code).toBe('webhook_address_private');
    }
    // The unspecified address is never allowed, whatever the operator allows, and said so.
    for (const url of ['http://0.0.0.0:8080/hook', 'http://[::]:8080/hook']) {
      const res = await h.post(hooks(space), { key: space.ownerKey, body: { url } });
      expectError(res, 400);
      expect(res.body.error).toMatch(/the unspecified address \(0\.0\.0\.0, ::\) is never allowed$/);
      expect(res.body.code).toBe('invalid_request');
    }
    await withServer(
      { config: { webhookUrls: { allowPrivate: true, allowNetworks: [] } } },
      async ({ h: open }) => {
        const lax = await open.createSpace();
        const res = await open.post(hooks(lax), {
          key: lax.ownerKey,
          body: { url: 'http://0.0.0.0:8080/hook' },
        });
        expectError(res, 400);
        expect(res.body.error).not.toMatch(/loopback/);
        expect(res.body.error).toMatch(/never allowed/);
      },
    );
    // A public address is fine (nothing is sent until an event happens).
    expectOk(
      await h.post(hooks(space), { key: space.ownerKey, body: { url: 'https://93.184.216.34/hook' } }),
      201,
    );
  });

  it('looks its host up before a guarded registration opens its transaction: the database serves on meanwhile', async () => {
    // On PGlite a transaction holds every query of the process: a lookup inside one (up to 5 s)
    // stopped them all.
    const lookups: string[] = [];
    let answer: (addresses: string[]) => void = () => {};
    const lookupHost = (host: string) => {
      lookups.push(host);
      return new Promise<string[]>((resolve) => (answer = resolve));
    };
    await withServer({ lookupHost }, async ({ h: node }) => {
      const space = await node.createSpace();
      const register = () =>
        node.post(hooks(space), {
          key: space.ownerKey,
          body: { url: 'https://hooks.example/in' },
          headers: { 'Idempotency-Key': 'register-once' },
        });
      const registering = register();
      await expect.poll(() => lookups).toEqual(['hooks.example']);
      expectOk(await node.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
      answer(['93.184.216.34']);
      const res = await registering;
      expectOk(res, 201);
      expect(res.body.url).toBe('https://hooks.example/in');
      // Its retry is the replay, without a lookup.
      const again = await register();
      expectOk(again, 201);
      expect(again.headers.get('idempotency-replayed')).toBe('true');
      expect(again.body.id).toBe(res.body.id);
      expect(lookups).toEqual(['hooks.example']);
    });
  });

  it('refuses loopback by default: only the operator allows it', async () => {
    await withServer({}, async ({ h: strict }) => {
      const space = await strict.createSpace();
      for (const url of [receiver.url, receiver.url.replace('127.0.0.1', 'localhost')]) {
        const res = await strict.post(hooks(space), { key: space.ownerKey, body: { url } });
        expectError(res, 400);
      }
    });
  });
});

describe('deliveries', () => {
  it('signs each delivery (Standard Webhooks) and retries a failing receiver until it takes it, once', async () => {
    const space = await h.createSpace();
    const guest = await h.joinActive(space, { name: 'Hooked' });
    const created = await h.post(hooks(space), {
      key: guest.key,
      body: { url: path('retry'), events: ['message'] },
    });
    expectOk(created, 201);
    const mine = () => receiver.received.filter((d) => JSON.parse(d.body).spaceId === space.spaceId);
    // Fails twice per event, then succeeds.
    receiver.answer = (_delivery, attempt) => (attempt <= 2 ? 500 : 204);
    try {
      const ids: string[] = [];
      for (const content of ['one', 'two']) {
        const sent = await send(space, space.ownerKey, { content });
        expectOk(sent);
        ids.push(sent.body.messageId);
      }
      await receiver.until(() => mine().filter((d) => d.status === 204).length === 2, 20_000);
      // Nothing more comes once each was taken.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const all = mine();
      expect(all).toHaveLength(6);
      const verifier = new Webhook(created.body.secret);
      for (const delivery of all) {
        expect(delivery.headers['content-type']).toBe('application/json');
        expect(delivery.headers['webhook-id']).toMatch(/^msg_[0-9a-f-]{36}$/);
        expect(Number(delivery.headers['webhook-timestamp'])).toBeGreaterThan(Date.now() / 1000 - 60);
        expect(delivery.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
        // Throws unless the signature is the HMAC-SHA256 of id.timestamp.body under the secret.
        verifier.verify(delivery.body, delivery.headers as Record<string, string>);
      }
      // One webhook-id per event, the same on each of its attempts; each taken once.
      const byId = new Map<string, number[]>();
      for (const d of all)
        byId.set(String(d.headers['webhook-id']), [
          ...(byId.get(String(d.headers['webhook-id'])) ?? []),
          d.status,
        ]);
      expect([...byId.values()]).toEqual([
        [500, 500, 204],
        [500, 500, 204],
      ]);
      // Deliveries are retried independently, so they may arrive out of order: data.seq orders them.
      const accepted = all
        .filter((d) => d.status === 204)
        .map((d) => JSON.parse(d.body))
        .sort((x, y) => x.data.seq - y.data.seq);
      expect(accepted.map((p) => [p.type, p.data.id, p.data.content])).toEqual([
        ['message', ids[0], 'one'],
        ['message', ids[1], 'two'],
      ]);
      expect(accepted[0]).toEqual({
        type: 'message',
        timestamp: accepted[0].data.timestamp,
        spaceId: space.spaceId,
        data: expect.objectContaining({ senderId: space.ownerId, seq: 1, mentions: [] }),
      });
      // A forged signature does not verify.
      expect(() =>
        new Webhook(created.body.secret).verify(
          `${all[0]!.body} `,
          all[0]!.headers as Record<string, string>,
        ),
      ).toThrow();
      const view = (await h.get(hooks(space), { key: guest.key })).body.webhooks[0];
      expect(view).toMatchObject({ enabled: true, failures: 0 });
      expect(view.lastError).toBeUndefined();
      expect(view.lastSuccessAt).toEqual(expect.stringMatching(/^\d{4}-/));
    } finally {
      receiver.answer = () => 200;
    }
  });

  it('sends a message once per webhook: as mention when it concerns you, never your own, filtered by type', async () => {
    const space = await h.createSpace({ ownerName: 'Olga' });
    const ada = await h.joinActive(space, { name: 'Ada' });
    const bob = await h.joinActive(space, { name: 'Bob' });
    const all = await h.post(hooks(space), { key: ada.key, body: { url: path('ada-all') } });
    expectOk(all, 201);
    const mentionsOnly = await h.post(hooks(space), {
      key: ada.key,
      body: { url: path('ada-mentions'), events: ['mention'] },
    });
    expectOk(mentionsOnly, 201);
    const question = await send(space, ada.key, { content: 'mine: never sent to my own webhooks' });
    await send(space, bob.key, { content: 'plain' });
    const reply = await send(space, bob.key, { content: 'an answer', replyTo: question.body.messageId });
    const ping = await send(space, space.ownerKey, { content: 'hi @Ada' });
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${bob.participantId}/mute`, {
        key: space.ownerKey,
      }),
    );

    const bodies = () =>
      receiver.received
        .filter((d) => JSON.parse(d.body).spaceId === space.spaceId)
        .map((d) => JSON.parse(d.body));
    // Deliveries are attempted side by side, so they may arrive in any order: wait for each kind.
    await receiver.until(() => bodies().some((b) => b.type === 'participant-status'), 15_000);
    await receiver.until(() => bodies().some((b) => b.type === 'message'), 15_000);
    await receiver.until(() => bodies().filter((b) => b.type === 'mention').length === 4, 15_000);
    const byType = bodies().map((b) => [b.type, b.data.content ?? b.data.status]);
    // ada-all: plain as message, reply and ping as mention, the mute; ada-mentions: reply and ping.
    expect(byType.filter(([t]) => t === 'message')).toEqual([['message', 'plain']]);
    expect(byType.filter(([t]) => t === 'mention').sort()).toEqual(
      [
        ['mention', 'an answer'],
        ['mention', 'an answer'],
        ['mention', 'hi @Ada'],
        ['mention', 'hi @Ada'],
      ].sort(),
    );
    expect(byType.filter(([t]) => t === 'participant-status')).toEqual([['participant-status', 'muted']]);
    expect(bodies().map((b) => b.data.id)).not.toContain(question.body.messageId);
    expect(
      bodies()
        .filter((b) => b.type === 'mention')
        .map((b) => b.data.id),
    ).toEqual(expect.arrayContaining([reply.body.messageId, ping.body.messageId]));
  });

  it('disables a webhook whose deliveries keep failing, and says so on the stream and to other webhooks', async () => {
    const space = await h.createSpace();
    const guest = await h.joinActive(space, { name: 'Flaky' });
    receiver.answer = (delivery) => (JSON.parse(delivery.body).type === 'message' ? 503 : 200);
    try {
      const failing = await h.post(hooks(space), {
        key: guest.key,
        body: { url: path('failing'), events: ['message'] },
      });
      expectOk(failing, 201);
      const watcher = await h.post(hooks(space), {
        key: space.ownerKey,
        body: { url: path('watcher'), events: ['webhook-disabled'] },
      });
      expectOk(watcher, 201);
      await send(space, space.ownerKey, { content: 'doomed' });
      await receiver.until(
        () =>
          receiver.received.some((d) => {
            const body = JSON.parse(d.body);
            return body.spaceId === space.spaceId && body.type === 'webhook-disabled';
          }),
        20_000,
        'webhook-disabled',
      );
      const attempts = receiver.received.filter((d) => {
        const body = JSON.parse(d.body);
        return body.spaceId === space.spaceId && body.type === 'message';
      });
      // The first attempt and the two retries of the schedule.
      expect(attempts.map((d) => d.status)).toEqual([503, 503, 503]);
      const notice = receiver.received
        .map((d) => JSON.parse(d.body))
        .find((b) => b.spaceId === space.spaceId && b.type === 'webhook-disabled');
      expect(notice.data).toEqual({
        webhookId: failing.body.id,
        participantId: guest.participantId,
        reason: expect.stringMatching(/^every attempt failed for .* \(last: HTTP 503\)$/),
      });
      const view = (await h.get(hooks(space), { key: guest.key })).body.webhooks[0];
      expect(view).toMatchObject({ enabled: false, lastError: 'HTTP 503', failures: 3 });
      expect(view.disabledAt).toEqual(expect.stringMatching(/^\d{4}-/));
      const events = await recordedEvents(srv, space.spaceId, 'webhook-disabled');
      expect(events.map((e) => e.data.webhookId)).toEqual([failing.body.id]);

      // Nothing more is sent to it.
      const before = attempts.length;
      await send(space, space.ownerKey, { content: 'after' });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(
        receiver.received.filter((d) => {
          const body = JSON.parse(d.body);
          return body.spaceId === space.spaceId && body.type === 'message';
        }),
      ).toHaveLength(before);
    } finally {
      receiver.answer = () => 200;
    }
  });

  it('disables at once a webhook whose receiver answers 410 Gone', async () => {
    const space = await h.createSpace();
    receiver.answer = () => 410;
    try {
      const gone = await h.post(hooks(space), { key: space.ownerKey, body: { url: path('gone') } });
      expectOk(gone, 201);
      const guest = await h.joinActive(space);
      await send(space, guest.key, { content: 'x' });
      const deadline = Date.now() + 15_000;
      let view: any;
      while (Date.now() < deadline) {
        view = (await h.get(hooks(space), { key: space.ownerKey })).body.webhooks[0];
        if (!view.enabled) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      // The join's and the message's deliveries may both have been attempted by then.
      expect(view).toMatchObject({ enabled: false, lastError: 'HTTP 410' });
      expect(view.failures).toBeGreaterThanOrEqual(1);
      const disabled = await recordedEvents(srv, space.spaceId, 'webhook-disabled');
      expect(disabled.map((e) => e.data.webhookId)).toEqual([gone.body.id]);
    } finally {
      receiver.answer = () => 200;
    }
  });
});

describe("a node whose network settings refuse what another node's allowed", () => {
  const lines: string[] = [];
  // Its deliveries refuse loopback: WEBHOOK_ALLOW_NETWORKS is unset on this node.
  const { srv: node, h: api } = useServer({
    config: {
      webhookUrls: { allowPrivate: false, allowNetworks: [] },
      webhookRetryDelaysMs: [300, 300],
      webhookPollMs: 1000,
      logLevel: 'warn',
    },
    logStream: { write: (line) => void lines.push(line) },
  });
  const refusals = () =>
    lines
      .map((line) => JSON.parse(line))
      .filter((l) => String(l.msg).startsWith("webhook delivery refused by this node's network policy"));

  it('warns of each attempt it refuses, counted as failed and retried on schedule, then given up', async () => {
    // Registered as a node with WEBHOOK_ALLOW_NETWORKS=127.0.0.1 registers it (the shared queue's
    // deliveries then go to whichever node claims them).
    node.server.deps.config.webhookUrls = { allowPrivate: false, allowNetworks: ['127.0.0.1'] };
    const space = await api.createSpace();
    const guest = await api.joinActive(space, { name: 'Listener' });
    const created = await api.post(hooks(space), {
      key: guest.key,
      body: { url: `${path('refused-here')}?token=receiver-secret`, events: ['message'] },
    });
    expectOk(created, 201);
    expectOk(
      await api.post(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey, body: { content: 'x' } }),
    );
    // The first attempt and the two retries of the schedule, each refused here and said.
    await expect.poll(refusals, { timeout: 15_000 }).toHaveLength(3);
    const host = new URL(receiver.url).host;
    expect(refusals()).toEqual(
      [1, 2, 3].map((attempt) =>
        expect.objectContaining({
          level: 40,
          spaceId: space.spaceId,
          webhookId: created.body.id,
          attempt,
          host,
        }),
      ),
    );
    expect(JSON.stringify(refusals())).not.toContain('receiver-secret');
    expect(refusals()[0].msg).toContain('give them all the same webhook settings');
    expect(receiver.received.filter((d) => JSON.parse(d.body).spaceId === space.spaceId)).toEqual([]);
    await expect
      .poll(async () => (await api.get(hooks(space), { key: guest.key })).body.webhooks[0])
      .toMatchObject({
        enabled: false,
        failures: 3,
        lastError: 'refused: the host resolves to a private address',
      });
  });
});
