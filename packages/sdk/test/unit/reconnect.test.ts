// How long the long-lived loops (a stream, inbox.follow()) wait out a server that is away, and how
// soon they find it back: on a fake clock, against a fetch that plays a server going down.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConnectionError, Convene, ConveneError, type DisconnectInfo, type Logger } from '../../src';
import { reconnectPolicy } from '../../src/internal';

const SPACE = '00000000-0000-4000-8000-000000000001';
const TEN_MINUTES = 600_000;

/** What fetch throws for a server that is down: the connection refused. */
const refused = () =>
  new TypeError('fetch failed', {
    cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
  });

/** An answer that never comes, until the request is aborted. */
const hanging = (signal: AbortSignal | null | undefined) =>
  new Promise<Response>((_, reject) =>
    signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))),
  );

/** A stream's answer: one context event, then the end of the connection unless `open`. */
function sse(open: boolean, signal: AbortSignal | null | undefined): Response {
  const context = { participants: [], artifacts: [], suggestedPollingIntervalMs: 1000, lastEventId: 0 };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(`event: context\ndata: ${JSON.stringify(context)}\n\n`));
      if (!open) controller.close();
      else
        signal?.addEventListener('abort', () => controller.error(new DOMException('aborted', 'AbortError')));
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
}

/**
 * A server that answers once (a stream's connection that ends, or an inbox page), then is down
 * until `back()`: from then on a stream stays open; an inbox answers at once, but a long poll waits.
 */
function flakyServer() {
  let state: 'first' | 'down' | 'up' = 'first';
  const warned: string[] = [];
  /** Calls made while the server was down. */
  let refusedCalls = 0;
  const logger: Logger = { debug() {}, info() {}, warn: (line) => warned.push(line), error() {} };
  const impl: typeof fetch = async (input, init) => {
    if (state === 'down') {
      refusedCalls++;
      throw refused();
    }
    const first = state === 'first';
    if (first) state = 'down';
    const url = new URL(String(input));
    if (url.pathname.endsWith('/stream')) return sse(!first, init?.signal);
    // A long poll waits: nothing new comes.
    if (Number(url.searchParams.get('wait') ?? 0) > 0) return hanging(init?.signal);
    return new Response(JSON.stringify({ messages: [], unread: 0, lastReadSeq: 0 }), {
      headers: { 'content-type': 'application/json' },
    });
  };
  const hub = new Convene({ baseUrl: 'http://convene.test', fetch: impl, maxRetries: 0, logger });
  return {
    space: hub.space(SPACE, 'k'.repeat(64)),
    back: () => (state = 'up'),
    warned,
    refusedCalls: () => refusedCalls,
  };
}

/** Runs a loop in the background: when it ended (fake time) and with what. */
function run(loop: AsyncIterable<unknown>) {
  const outcome: { at?: number; error?: unknown } = {};
  const done = (async () => {
    try {
      for await (const _ of loop);
    } catch (error) {
      outcome.error = error;
    }
    outcome.at = Date.now();
  })();
  return { outcome, done };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe.each(['stream', 'follow'] as const)('a long-lived loop (%s) whose server goes away', (kind) => {
  const open = (
    space: ReturnType<typeof flakyServer>['space'],
    options: {
      signal?: AbortSignal;
      maxOutageMs?: number;
      maxReconnects?: number;
      onDisconnect?: (info: DisconnectInfo) => void;
      onReconnect?: () => void;
    },
  ): AsyncIterable<unknown> =>
    kind === 'stream' ? space.messages.stream(options) : space.inbox.follow({ wait: 30, ...options });

  it('keeps trying for nine minutes, at most 2.5 s apart in whole ms, and is back within 2.5 s of the server', async () => {
    const server = flakyServer();
    const controller = new AbortController();
    const disconnects: DisconnectInfo[] = [];
    let reconnects = 0;
    const { outcome, done } = run(
      open(server.space, {
        signal: controller.signal,
        onDisconnect: (info) => disconnects.push(info),
        onReconnect: () => reconnects++,
      }),
    );
    await vi.advanceTimersByTimeAsync(9 * 60_000);
    expect(outcome).toEqual({});
    // Far beyond the 10 failures in a row that used to end it.
    expect(disconnects.length).toBeGreaterThan(200);
    const delays = disconnects.map((d) => d.delayMs);
    for (const delay of delays) {
      expect(Number.isInteger(delay)).toBe(true);
      expect(delay).toBeLessThanOrEqual(2500);
    }
    expect(Math.max(...delays)).toBeGreaterThanOrEqual(1875);
    expect(disconnects.at(-1)?.error).toBeInstanceOf(ConnectionError);

    server.back();
    await vi.advanceTimersByTimeAsync(2500);
    expect(reconnects).toBe(1);
    controller.abort();
    await done;
    expect(outcome.error).toBeUndefined();
  });

  it('throws the last error once the server has been away for ten minutes, and says so', async () => {
    const server = flakyServer();
    const started = Date.now();
    const { outcome, done } = run(open(server.space, {}));
    await vi.advanceTimersByTimeAsync(TEN_MINUTES + 5000);
    await done;
    expect(outcome.error).toBeInstanceOf(ConnectionError);
    expect(outcome.at! - started).toBeGreaterThanOrEqual(TEN_MINUTES);
    expect(outcome.at! - started).toBeLessThanOrEqual(TEN_MINUTES + 2500);
    expect(server.warned).toEqual([expect.stringMatching(/giving up after \d+ failed .*\(limit: 600 s\)/)]);
  });

  it('takes maxOutageMs and maxReconnects, the same options on both loops', async () => {
    const quick = flakyServer();
    const started = Date.now();
    const short = run(open(quick.space, { maxOutageMs: 5000 }));
    await vi.advanceTimersByTimeAsync(10_000);
    await short.done;
    expect(short.outcome.error).toBeInstanceOf(ConnectionError);
    expect(short.outcome.at! - started).toBeGreaterThanOrEqual(5000);
    expect(short.outcome.at! - started).toBeLessThanOrEqual(7500);

    // maxReconnects is the number of attempts at getting the server back, on both loops: the
    // stream loses it when its connection ends, the inbox when a call is refused (one call more).
    const lossCalls = kind === 'stream' ? 0 : 1;
    for (const maxReconnects of [3, 0]) {
      const counted = flakyServer();
      const disconnects: DisconnectInfo[] = [];
      const few = run(open(counted.space, { maxReconnects, onDisconnect: (info) => disconnects.push(info) }));
      await vi.advanceTimersByTimeAsync(10_000);
      await few.done;
      expect(few.outcome.error).toBeInstanceOf(ConnectionError);
      expect(counted.refusedCalls()).toBe(lossCalls + maxReconnects);
      expect(disconnects).toHaveLength(maxReconnects);
      expect(counted.warned).toEqual([
        expect.stringMatching(new RegExp(`\\(limit: 600 s or ${maxReconnects} attempts\\)`)),
      ]);
    }
  });
});

describe('the pause of a long-lived loop', () => {
  const retryAfter = (seconds: string) => new Headers({ 'retry-after': seconds });

  it('is its backoff, or a longer Retry-After however long, never a shorter one, and never past the outage’s end', () => {
    const policy = reconnectPolicy({ maxOutageMs: TEN_MINUTES });
    // Not in an outage (a 429 between answers): the server's wait, beyond any client's cap.
    expect(policy.delay(retryAfter('120'), 1)).toBeGreaterThanOrEqual(120_000);
    // A Retry-After of 0 is not a reason to come back at once: the backoff still holds.
    for (let i = 0; i < 20; i++) expect(policy.delay(retryAfter('0'), 3)).toBeGreaterThanOrEqual(1500);
    expect(policy.delay(undefined, 1)).toBeLessThanOrEqual(500);
    // In an outage, at most until it ends, when the loop gives up.
    policy.lost();
    expect(policy.delay(retryAfter('3600'), 1)).toBeLessThanOrEqual(TEN_MINUTES);
    expect(policy.delay(retryAfter('3600'), 1)).toBeGreaterThan(TEN_MINUTES - 1000);
  });
});

describe('a stream answered by something other than the server (a proxy’s page, an app’s fallback)', () => {
  const page = () => new Response('<html>portal</html>', { headers: { 'content-type': 'text/html' } });

  it('fails at once on its first connection, as a call answered so does, and is retried once it was live', async () => {
    let calls = 0;
    const hub = new Convene({
      baseUrl: 'http://convene.test',
      fetch: async () => {
        calls++;
        return page();
      },
    });
    const first = run(hub.space(SPACE, 'k'.repeat(64)).messages.stream());
    await vi.advanceTimersByTimeAsync(0);
    await first.done;
    expect(first.outcome.error).toBeInstanceOf(ConveneError);
    expect(first.outcome.error).toMatchObject({ status: 200 });
    expect((first.outcome.error as Error).message).toMatch(
      /^GET http:\/\/convene\.test\/hub\/space\/[\w-]+\/messages\/stream: the answer is not event-stream$/,
    );
    expect(calls).toBe(1);
    // A document's download, and a JSON answer, likewise.
    const space = hub.space(SPACE, 'k'.repeat(64));
    await expect(space.artifacts.download(SPACE)).rejects.toThrow(/: the answer is not markdown$/);
    await expect(space.get()).rejects.toThrow(/: the answer is not JSON$/);

    // Live once, then the page twice (a deploy's maintenance page), then the server: it comes back.
    let answers = 0;
    const disconnects: DisconnectInfo[] = [];
    const controller = new AbortController();
    const flaky = new Convene({
      baseUrl: 'http://convene.test',
      maxRetries: 0,
      fetch: async (_input, init) =>
        answers++ === 1 || answers === 3 ? page() : sse(answers > 1, init?.signal),
    });
    const contexts: unknown[] = [];
    const live = (async () => {
      for await (const event of flaky.space(SPACE, 'k'.repeat(64)).messages.stream({
        signal: controller.signal,
        onDisconnect: (info) => disconnects.push(info),
      }))
        contexts.push(event.event);
    })();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(contexts).toEqual(['context', 'context']);
    expect(answers).toBe(4);
    expect(disconnects.map((d) => d.error.message)).toEqual([
      'the server ended the stream',
      expect.stringMatching(/: the answer is not event-stream$/),
      expect.stringMatching(/: the answer is not event-stream$/),
    ]);
    controller.abort();
    await live;
  });
});
