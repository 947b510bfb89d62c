// Retries, timeouts and idempotency, with an injected fetch in front of the real server: it can
// answer in the server's place (a 429, a 503), or let the server run the request and then lose
// the answer (a dropped connection, a timeout), which is where Idempotency-Key earns its keep.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AbortError,
  ConnectionError,
  Convene,
  LockedError,
  RateLimitError,
  ServiceUnavailableError,
  TimeoutError,
} from '../src';
import { closedPort, hub, ownedSpace, participant, type Sent, serverUrl, until } from './helpers';
import { type RunningServer, startServer } from './helpers/server';

type Step = 'forward' | 'drop-after' | 'hang-after' | 'refused' | ((sent: Sent) => Response);

/**
 * A fetch that plays `steps` in order, one per call, then forwards every later call:
 * - `forward`: to the real server;
 * - `drop-after`: to the server, which runs it, then throws as a connection lost before the answer;
 * - `hang-after`: to the server, then waits for the client's abort (its timeout) and throws;
 * - `refused`: throws as a connection refused (the server never saw it);
 * - a function: its Response, in the server's place.
 */
function scriptedFetch(...steps: Step[]) {
  const sent: Sent[] = [];
  const replayed: (string | null)[] = [];
  const impl: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    const call: Sent = {
      method: init?.method ?? 'GET',
      url: String(input),
      idempotencyKey: headers.get('idempotency-key'),
    };
    sent.push(call);
    const step = steps[sent.length - 1] ?? 'forward';
    if (typeof step === 'function') return step(call);
    if (step === 'refused')
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' }),
      });
    const response = await fetch(input, init);
    replayed.push(response.headers.get('idempotency-replayed'));
    if (step === 'forward') return response;
    await response.text();
    if (step === 'hang-after')
      await new Promise<void>((_, reject) =>
        init?.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))),
      );
    throw new TypeError('fetch failed', { cause: new Error('other side closed') });
  };
  return { impl, sent, replayed };
}

const answer =
  (status: number, headers: Record<string, string> = {}) =>
  () =>
    new Response(JSON.stringify({ error: `synthetic ${status}` }), {
      status,
      headers: { 'content-type': 'application/json', ...headers },
    });

const answer503 = (error: string, code: string) => () =>
  new Response(JSON.stringify({ error, code }), {
    status: 503,
    headers: { 'content-type': 'application/json', 'retry-after': '0' },
  });

describe('retries', () => {
  it('waits out a 429 for its Retry-After, then succeeds with the same Idempotency-Key', async () => {
    const { owner, spaceId } = await ownedSpace();
    const fetch = scriptedFetch(answer(429, { 'retry-after': '1' }));
    const client = hub({ fetch: fetch.impl }).space(spaceId, owner.key);
    const started = Date.now();
    const sent = await client.messages.send('after the wait');
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(fetch.sent.length).toBe(2);
    expect(fetch.sent[0]?.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(fetch.sent[1]?.idempotencyKey).toBe(fetch.sent[0]?.idempotencyKey);
    expect((await owner.messages.list()).messages.map((m) => m.id)).toEqual([sent.messageId]);
  });

  it('retries a 503 and runs the write once', async () => {
    const { owner, spaceId } = await ownedSpace();
    const fetch = scriptedFetch(answer(503, { 'retry-after': '0' }));
    await hub({ fetch: fetch.impl }).space(spaceId, owner.key).messages.send('once');
    expect(fetch.sent.length).toBe(2);
    expect((await owner.messages.list()).messages.length).toBe(1);
  });

  it('retries a write whose answer was lost, and the server replays it instead of running it again', async () => {
    const { owner, spaceId } = await ownedSpace();
    const fetch = scriptedFetch('drop-after');
    const { data, response } = await hub({ fetch: fetch.impl })
      .space(spaceId, owner.key)
      .messages.send('exactly once')
      .withResponse();
    expect(fetch.sent.map((s) => s.idempotencyKey)).toEqual([
      fetch.sent[0]?.idempotencyKey,
      fetch.sent[0]?.idempotencyKey,
    ]);
    // The server ran the first request and replayed its answer to the second.
    expect(fetch.replayed).toEqual([null, 'true']);
    expect(response.headers.get('idempotency-replayed')).toBe('true');
    const { messages } = await owner.messages.list();
    expect(messages.map((m) => [m.id, m.content])).toEqual([[data.messageId, 'exactly once']]);
  });

  it('says, on a write that failed, the Idempotency-Key to send it again with, and the server replays it', async () => {
    const { owner, spaceId } = await ownedSpace();
    const fetch = scriptedFetch('drop-after');
    const lost = await hub({ fetch: fetch.impl, maxRetries: 0 })
      .space(spaceId, owner.key)
      .messages.send('did it arrive?')
      .catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(ConnectionError);
    const { idempotencyKey } = lost as ConnectionError;
    expect(idempotencyKey).toBe(fetch.sent[0]?.idempotencyKey);
    // Sent again with it, the write is not run twice: the server replays the first answer.
    const { response } = await owner.messages.send('did it arrive?', { idempotencyKey }).withResponse();
    expect(response.headers.get('idempotency-replayed')).toBe('true');
    expect((await owner.messages.list()).messages.map((m) => m.content)).toEqual(['did it arrive?']);
    // A read has none.
    const read = await hub({ fetch: scriptedFetch('drop-after').impl, maxRetries: 0 })
      .space(spaceId, owner.key)
      .get()
      .catch((e: unknown) => e);
    expect(read).toBeInstanceOf(ConnectionError);
    expect((read as ConnectionError).idempotencyKey).toBeUndefined();
  });

  it('sends no Idempotency-Key with a write the server never replays, and its error names none', async () => {
    // The server ignores the header on createSpace: a key on the error would promise its retry a
    // replay, and the retry would make a second space.
    const fetch = scriptedFetch('drop-after');
    const lost = await hub({ fetch: fetch.impl, maxRetries: 0 })
      .spaces.create({ name: 'lost answer', description: '' }, { idempotencyKey: crypto.randomUUID() })
      .catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(ConnectionError);
    expect(lost).toMatchObject({ mayHaveRun: true, idempotencyKey: undefined });
    expect(fetch.sent).toEqual([expect.objectContaining({ method: 'POST', idempotencyKey: null })]);
    // A replayable write still carries one.
    const { owner, spaceId } = await ownedSpace();
    const sends = scriptedFetch();
    await hub({ fetch: sends.impl }).space(spaceId, owner.key).messages.send('hello');
    expect(sends.sent[0]?.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('times out an attempt that gets no answer, retries it, and the server replays it', async () => {
    const { owner, spaceId } = await ownedSpace();
    const me = await participant(owner);
    const doc = await me.artifacts.create({ name: 'doc', content: 'v1' });
    await me.artifacts.lock(doc.id);
    const fetch = scriptedFetch('hang-after');
    const client = hub({ fetch: fetch.impl, timeoutMs: 500 }).space(spaceId, me.key);
    const written = await client.artifacts.write(doc.id, 'v2');
    expect(written.version).toBe(2);
    expect(fetch.replayed).toEqual([null, 'true']);
    expect((await owner.artifacts.history(doc.id)).versions.map((v) => v.version)).toEqual([2, 1]);

    const once = scriptedFetch('hang-after');
    const error = await hub({ fetch: once.impl, timeoutMs: 300, maxRetries: 0 })
      .space(spaceId, me.key)
      .get()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as TimeoutError).message).toBe(
      `no answer within 300 ms (getSpace: GET ${serverUrl()}/hub/space/${spaceId})`,
    );
    expect(error).toMatchObject({
      operation: 'getSpace',
      method: 'GET',
      url: `${serverUrl()}/hub/space/${spaceId}`,
    });
  });

  it('names the operation and the URL it sent, not the route template, when no answer comes', async () => {
    const spaceId = crypto.randomUUID();
    const port = await closedPort();
    const client = new Convene({ baseUrl: `http://127.0.0.1:${port}`, maxRetries: 0, logLevel: 'off' });
    const error = await client
      .space(spaceId, 'a'.repeat(64))
      .messages.send('hello')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    const url = `http://127.0.0.1:${port}/hub/space/${spaceId}/messages`;
    // Node's own words for the failure, not fetch's "fetch failed" around them.
    expect((error as ConnectionError).message).toBe(
      `connect ECONNREFUSED 127.0.0.1:${port} (sendMessage: POST ${url})`,
    );
    expect(error).toMatchObject({ operation: 'sendMessage', method: 'POST', url, code: 'ECONNREFUSED' });
    expect((error as ConnectionError).cause).toBeInstanceOf(TypeError);
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({
      name: 'ConnectionError',
      url,
      code: 'ECONNREFUSED',
    });
  });

  // The README lists the codes a ConnectionError may have: this one is Node's fetch's own (undici),
  // not the system's, and the SDK passes it on as it comes (Bun says ECONNRESET for the same).
  it('gives Node’s UND_ERR_SOCKET when the server closes the connection before answering (killed mid-request)', async () => {
    const closing = createServer((request) => request.socket.destroy());
    await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = closing.address() as AddressInfo;
      const spaceId = crypto.randomUUID();
      const error = await new Convene({ baseUrl: `http://127.0.0.1:${port}`, maxRetries: 0, logLevel: 'off' })
        .space(spaceId, 'a'.repeat(64))
        .get()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      // The request went out: the server may have run it.
      expect(error).toMatchObject({ code: 'UND_ERR_SOCKET', mayHaveRun: true });
      expect((error as Error).message).toBe(
        `other side closed (getSpace: GET http://127.0.0.1:${port}/hub/space/${spaceId})`,
      );
    } finally {
      closing.closeAllConnections();
      await new Promise((resolve) => closing.close(resolve));
    }
  });

  it('says a write may have run when an earlier attempt was cut off, however the last one failed', async () => {
    const { owner, spaceId } = await ownedSpace();
    // The first attempt runs on the server and its answer is lost; the retries are refused.
    const cut = scriptedFetch('drop-after', 'refused', 'refused');
    const error = await hub({ fetch: cut.impl })
      .space(spaceId, owner.key)
      .messages.send('maybe sent')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(cut.sent.length).toBe(3);
    // The last attempt's code, but not its verdict: the message is in the space.
    expect(error).toMatchObject({ code: 'ECONNREFUSED', mayHaveRun: true });
    expect((error as Error).message).toMatch(
      /an earlier attempt may have run \(fetch failed: other side closed\)$/,
    );
    const { messages } = await hub().space(spaceId, owner.key).messages.list();
    expect(messages.map((m) => m.content)).toContain('maybe sent');

    // Refused every time: certainly not run.
    const refused = scriptedFetch('refused', 'refused', 'refused');
    const never = await hub({ fetch: refused.impl })
      .space(spaceId, owner.key)
      .messages.send('never sent')
      .catch((e: unknown) => e);
    expect(never).toMatchObject({ code: 'ECONNREFUSED', mayHaveRun: false });
    expect((never as Error).message).not.toMatch(/earlier attempt/);
  });

  it('says a write may have run on whatever error ends it, a 429 after a dropped connection too; a 4xx alone says it did not', async () => {
    const { owner, spaceId } = await ownedSpace();
    // The first attempt runs and its answer is lost; the retry is refused for two minutes.
    const cut = scriptedFetch('drop-after', answer(429, { 'retry-after': '120' }));
    const error = await hub({ fetch: cut.impl })
      .space(spaceId, owner.key)
      .messages.send('sent after all')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(cut.sent.length).toBe(2);
    expect(error).toMatchObject({ status: 429, retryAfter: 120, mayHaveRun: true });
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({ name: 'RateLimitError', mayHaveRun: true });
    const { messages } = await hub().space(spaceId, owner.key).messages.list();
    expect(messages.map((m) => m.content)).toContain('sent after all');

    // Refused at once: nothing ran.
    const refused = scriptedFetch(answer(429, { 'retry-after': '120' }));
    const never = await hub({ fetch: refused.impl })
      .space(spaceId, owner.key)
      .messages.send('not sent')
      .catch((e: unknown) => e);
    expect(never).toMatchObject({ status: 429, mayHaveRun: false });
    const missing = await hub()
      .space(spaceId, owner.key)
      .artifacts.get(crypto.randomUUID())
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, mayHaveRun: false });
  });

  it('says nothing of "may have run" on a read, nor after a 503 by which a server shutting down refused the request', async () => {
    const { owner, spaceId } = await ownedSpace();
    const shuttingDown = answer503('the server is shutting down; retry shortly', 'shutting_down');
    // A long poll cut off by the shutdown, then the server is gone.
    const read = scriptedFetch(shuttingDown, 'refused', 'refused');
    const readError = await hub({ fetch: read.impl })
      .space(spaceId, owner.key)
      .inbox.get({ wait: 5 })
      .catch((e: unknown) => e);
    expect(readError).toBeInstanceOf(ConnectionError);
    expect(read.sent.length).toBe(3);
    expect((readError as Error).message).not.toMatch(/may have run/);
    expect(readError).toMatchObject({ code: 'ECONNREFUSED', mayHaveRun: false });
    // A read cut off: it may have run, which changes nothing, so the message does not say so.
    const cutRead = scriptedFetch('drop-after', 'refused', 'refused');
    const cutError = await hub({ fetch: cutRead.impl })
      .space(spaceId, owner.key)
      .get()
      .catch((e: unknown) => e);
    expect((cutError as Error).message).not.toMatch(/may have run/);
    expect(cutError).toMatchObject({ mayHaveRun: true });

    // A write refused while the server closes (503 shutting_down): nothing ran, and even a write
    // the server cannot replay is sent again.
    const closing = () =>
      new Response(JSON.stringify({ error: 'the server is shutting down', code: 'shutting_down' }), {
        status: 503,
        headers: { 'content-type': 'application/json' },
      });
    const write = scriptedFetch(closing, 'refused', 'refused');
    const writeError = await hub({ fetch: write.impl })
      .space(spaceId, owner.key)
      .messages.send('never ran')
      .catch((e: unknown) => e);
    expect(writeError).toMatchObject({ code: 'ECONNREFUSED', mayHaveRun: false });
    expect((writeError as Error).message).not.toMatch(/may have run/);
    const create = scriptedFetch(closing, 'forward');
    await hub({ fetch: create.impl }).spaces.create({ name: 'after the restart', description: 'x' });
    expect(create.sent.length).toBe(2);

    // Any other 503 (the database away) may have run a write.
    const away = scriptedFetch(
      answer503(
        'the service is briefly unavailable (its database cannot be reached); retry shortly',
        'unavailable',
      ),
      'refused',
      'refused',
    );
    const awayError = await hub({ fetch: away.impl })
      .space(spaceId, owner.key)
      .messages.send('maybe ran')
      .catch((e: unknown) => e);
    expect(awayError).toMatchObject({ mayHaveRun: true });
    expect((awayError as Error).message).toMatch(
      /an earlier attempt may have run \(answered 503 the service is briefly unavailable/,
    );
  });

  it('retries a read after a dropped connection', async () => {
    const { owner, spaceId } = await ownedSpace();
    const fetch = scriptedFetch('drop-after', 'drop-after');
    expect((await hub({ fetch: fetch.impl }).space(spaceId, owner.key).get()).spaceId).toBe(spaceId);
    expect(fetch.sent.length).toBe(3);
  });

  it('gives up after maxRetries with the last error', async () => {
    const fetch = scriptedFetch(answer(503), answer(503), answer(503));
    const error = await hub({ fetch: fetch.impl, maxRetries: 1 })
      .health()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(fetch.sent.length).toBe(2);
  });

  it('never retries createSpace or link.start after an ambiguous failure', async () => {
    const fetch = scriptedFetch('drop-after', 'drop-after');
    const client = hub({ fetch: fetch.impl });
    await expect(client.spaces.create({ name: 'maybe', description: 'x' })).rejects.toBeInstanceOf(
      ConnectionError,
    );
    await expect(client.link.start({ agentName: 'maybe' })).rejects.toBeInstanceOf(ConnectionError);
    expect(fetch.sent.map((s) => s.method)).toEqual(['POST', 'POST']);

    const fiveHundred = scriptedFetch(answer(500));
    await expect(
      hub({ fetch: fiveHundred.impl }).spaces.create({ name: 'x', description: 'x' }),
    ).rejects.toMatchObject({
      status: 500,
    });
    expect(fiveHundred.sent.length).toBe(1);
  });

  it('does retry createSpace when the server certainly did not run it (429, connection refused)', async () => {
    const fetch = scriptedFetch(answer(429, { 'retry-after': '0' }), 'refused');
    const space = await hub({ fetch: fetch.impl }).spaces.create({ name: 'third time', description: 'x' });
    expect(space.ownerPrivateKey).toMatch(/^[0-9a-f]{64}$/);
    expect(fetch.sent.length).toBe(3);
  });

  it('never retries a 423 or a 409', async () => {
    const { owner, spaceId } = await ownedSpace();
    const me = await participant(owner);
    const doc = await owner.artifacts.create({ name: 'doc', content: 'x' });
    await owner.artifacts.lock(doc.id);
    const fetch = scriptedFetch();
    const client = hub({ fetch: fetch.impl }).space(spaceId, me.key);
    await expect(client.artifacts.lock(doc.id)).rejects.toBeInstanceOf(LockedError);
    expect(fetch.sent.length).toBe(1);
    await owner.close();
    await expect(hub({ fetch: fetch.impl }).space(spaceId, owner.key).close()).rejects.toMatchObject({
      status: 409,
    });
    expect(fetch.sent.length).toBe(2);
  });

  it('stops waiting for a retry when the signal aborts', async () => {
    const fetch = scriptedFetch(answer(429, { 'retry-after': '30' }));
    const controller = new AbortController();
    const started = Date.now();
    const call = hub({ fetch: fetch.impl }).health({ signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await expect(call).rejects.toBeInstanceOf(AbortError);
    // Named as the other errors name their call.
    await expect(call).rejects.toThrow(/^aborted \(health: GET http:\/\/\S+\/api\/health\)$/);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(fetch.sent.length).toBe(1);
  });

  it('throws a 429 at once when its Retry-After is beyond maxRetryAfterMs, of the client or of the call', async () => {
    const { owner, spaceId } = await ownedSpace();
    const fetch = scriptedFetch(answer(429, { 'retry-after': '30' }), answer(429, { 'retry-after': '30' }));
    const client = hub({ fetch: fetch.impl, maxRetryAfterMs: 5000 }).space(spaceId, owner.key);
    const started = Date.now();
    const refused = await client.messages.send('not now').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RateLimitError);
    expect((refused as RateLimitError).retryAfter).toBe(30);
    expect(fetch.sent.length).toBe(1);
    // The call's own cap, here below the client's default minute.
    const fromCall = await hub({ fetch: fetch.impl })
      .space(spaceId, owner.key)
      .messages.send('nor now', { maxRetryAfterMs: 10_000 })
      .catch((e: unknown) => e);
    expect(fromCall).toBeInstanceOf(RateLimitError);
    expect(fetch.sent.length).toBe(2);
    expect(Date.now() - started).toBeLessThan(5000);
    // A short Retry-After is still waited out under the cap, and the write then runs once.
    const short = scriptedFetch(answer(429, { 'retry-after': '1' }));
    await hub({ fetch: short.impl, maxRetryAfterMs: 5000 }).space(spaceId, owner.key).messages.send('now');
    expect(short.sent.length).toBe(2);
    expect((await owner.messages.list()).messages.map((m) => m.content)).toEqual(['now']);
  });

  it('waits longer than the client’s maxRetryAfterMs when the call allows it', async () => {
    const fetch = scriptedFetch(answer(429, { 'retry-after': '30' }));
    const warned: string[] = [];
    const logger = { debug() {}, info() {}, warn: (line: string) => warned.push(line), error() {} };
    const controller = new AbortController();
    const call = new Convene({
      baseUrl: 'http://127.0.0.1:9',
      fetch: fetch.impl,
      logger,
      maxRetryAfterMs: 5000,
    }).health({
      signal: controller.signal,
      maxRetryAfterMs: 60_000,
    });
    await until(() => (warned.length > 0 ? true : undefined));
    controller.abort();
    await expect(call).rejects.toBeInstanceOf(AbortError);
    // Up to a second of jitter above the 30 s asked (afterRetryAfterMs): 30,000 to 31,000 ms.
    expect(warned).toEqual([
      expect.stringMatching(/answered 429 synthetic 429; retrying in (30\d{3}|31000) ms/),
    ]);
  });

  it('warns at the default log level before waiting out a long Retry-After', async () => {
    const fetch = scriptedFetch(answer(429, { 'retry-after': '30' }));
    const warned: string[] = [];
    const logger = { debug() {}, info() {}, warn: (line: string) => warned.push(line), error() {} };
    const controller = new AbortController();
    const call = new Convene({ baseUrl: 'http://127.0.0.1:9', fetch: fetch.impl, logger }).health({
      signal: controller.signal,
    });
    await until(() => (warned.length > 0 ? true : undefined));
    controller.abort();
    await expect(call).rejects.toBeInstanceOf(AbortError);
    expect(warned).toEqual([
      expect.stringMatching(/answered 429 synthetic 429; retrying in (30\d{3}|31000) ms \(retry 1 of 2\)$/),
    ]);
  });

  it('logs each retry once, naming the route once and the retry it makes', async () => {
    const fetch = scriptedFetch('refused', answer(503, { 'retry-after': '0' }));
    const logged: string[] = [];
    const logger = { debug() {}, info: (line: string) => logged.push(line), warn() {}, error() {} };
    await hub({ fetch: fetch.impl, logger, logLevel: 'info' }).health();
    expect(logged).toEqual([
      expect.stringMatching(
        /^\[convene\] connect refused \(health: GET http:\/\/[^ ]+\/api\/health\); retrying in \d+ ms \(retry 1 of 2\)$/,
      ),
      `[convene] health: GET ${serverUrl()}/api/health answered 503 synthetic 503; retrying in 0 ms (retry 2 of 2)`,
    ]);
  });

  it('reuses a caller-chosen Idempotency-Key across calls', async () => {
    const { owner, spaceId } = await ownedSpace();
    const fetch = scriptedFetch();
    const client = hub({ fetch: fetch.impl }).space(spaceId, owner.key);
    const idempotencyKey = crypto.randomUUID();
    const first = await client.messages.send('one', { idempotencyKey });
    const { data: again, response } = await client.messages.send('one', { idempotencyKey }).withResponse();
    expect(again.messageId).toBe(first.messageId);
    expect(response.headers.get('idempotency-replayed')).toBe('true');
    expect((await owner.messages.list()).messages.length).toBe(1);
  });
});

describe('a real rate limit', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_S: '2' });
  });
  afterAll(() => server?.close());

  it('is waited out through its Retry-After, or thrown as a RateLimitError without retries', async () => {
    const logged: string[] = [];
    const logger = { debug() {}, info: (m: string) => logged.push(m), warn() {}, error() {} };
    const client = new Convene({ baseUrl: server.url, logger, logLevel: 'info' });
    const space = await client.spaces.create({ name: 'limited', description: 'x' });
    const owner = client.space(space.spaceId, space.ownerPrivateKey);
    // The owner key is its own client: three requests per two-second window.
    const strict = new Convene({ baseUrl: server.url, maxRetries: 0, logLevel: 'off' }).space(
      space.spaceId,
      owner.key,
    );
    let limited: unknown;
    for (let i = 0; i < 4 && !limited; i++)
      limited = await strict.get().then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(limited).toBeInstanceOf(RateLimitError);
    expect((limited as RateLimitError).retryAfter).toBeGreaterThan(0);
    expect((limited as RateLimitError).retryAfter).toBeLessThanOrEqual(2);

    const { response } = await owner.get().withResponse();
    expect(response.status).toBe(200);
    expect(logged.some((line) => line.includes('answered 429 rate limit exceeded; retrying'))).toBe(true);
  });
});
