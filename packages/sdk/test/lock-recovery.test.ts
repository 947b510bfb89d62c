import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AbortError,
  type ClientOptions,
  ConnectionError,
  InternalServerError,
  LockedError,
  TimeoutError,
} from '../src';
import { hub, ownedSpace, participant, type Sent, unavailable, until } from './helpers';
import { type RunningServer, startServer } from './helpers/server';

// withLock where the network or the server fails it: lock calls whose answer is lost, and a space
// that closes under the callback. Their own file (from artifacts.test.ts), so that these minutes
// of waiting for real lock lifetimes run beside the other files rather than after them.

/** What a lossy fetch does with one lock request; a function gets `forward`, which sends it on. */
type LockStep =
  | 'forward'
  | 'lose'
  | 'hang'
  | 'bad-gateway'
  | ((forward: () => Promise<Response>) => Promise<Response>);

const isLock = (method: string, url: string) => method === 'POST' && url.endsWith('/lock');

/** Node's fetch when the connection is reset after the request went out: no answer, maybe run. */
const reset = () =>
  new TypeError('fetch failed', {
    cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
  });
/** Node's fetch when nothing listens: the request never reached the server. */
const refused = () =>
  new TypeError('fetch failed', {
    cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
  });

/**
 * A fetch in front of the server that plays `steps` on the lock requests (`POST …/lock`), one a
 * request, then forwards them, and forwards every other request. `lose`: the server runs the lock
 * and its answer is lost (a proxy or the network cut the connection); `hang`: the server runs it
 * and no answer comes until the client gives up (its timeout); `bad-gateway`: the server runs it
 * and a proxy answers 502. `sent` records every request.
 */
function lossyLocks(...steps: LockStep[]) {
  const sent: Sent[] = [];
  let locks = 0;
  const impl: typeof fetch = async (input, init) => {
    const method = init?.method ?? 'GET';
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const call: Sent = { method, url, idempotencyKey: new Headers(init?.headers).get('idempotency-key') };
    sent.push(call);
    const forward = async () => {
      const response = await fetch(input, init);
      call.replayed = response.headers.get('idempotency-replayed');
      return response;
    };
    const step = isLock(method, url) ? (steps[locks++] ?? 'forward') : 'forward';
    if (step === 'forward') return forward();
    if (typeof step === 'function') return step(forward);
    await (await forward()).text();
    if (step === 'bad-gateway')
      return new Response('<html><body>502 Bad Gateway</body></html>', {
        status: 502,
        headers: { 'content-type': 'text/html' },
      });
    if (step === 'hang')
      await new Promise<never>((_, reject) =>
        init?.signal?.addEventListener('abort', () =>
          reject(new DOMException('This operation was aborted', 'AbortError')),
        ),
      );
    throw reset();
  };
  return {
    impl,
    locks: () => sent.filter((s) => isLock(s.method, s.url)),
    unlocks: () => sent.filter((s) => s.method === 'DELETE' && s.url.endsWith('/lock')),
  };
}

/** A logger that keeps the client's warnings. */
function recordingLogger() {
  const lines = { warn: [] as string[] };
  const logger = { debug() {}, info() {}, warn: (line: string) => lines.warn.push(line), error() {} };
  return { lines, options: { logger, logLevel: 'warn' } as const };
}

// A server whose locks live their real 10 minutes, not the shared server's 3 s: a lock left behind
// stays held long after withLock gave up, as in the trial that found it, rather than lapsing by
// itself before the test looks.
describe('withLock when its lock call gets no answer', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ LOCK_TTL_S: '600' });
  });
  afterAll(() => server?.close());
  const client = (options: Partial<ClientOptions> = {}) => hub({ baseUrl: server.url, ...options });

  it.each([
    ['lost', 'lose', ConnectionError],
    ['cut off by the timeout', 'hang', TimeoutError],
    ['a proxy’s 502', 'bad-gateway', InternalServerError],
  ] as const)(
    'releases the lock its call took when the answer was %s: another participant may lock it at once',
    async (_, step, Failure) => {
      const { owner } = await ownedSpace(client());
      const rival = await participant(owner, 'Rival', client());
      const { lines, options } = recordingLogger();
      const lossy = lossyLocks(step, step, step);
      const me = await participant(
        owner,
        'Unlucky',
        client({ fetch: lossy.impl, timeoutMs: 2000, ...options }),
      );
      const doc = await me.artifacts.create({ name: 'doc', content: 'x' });
      let called = false;
      const error = await me.artifacts
        .withLock(doc.id, () => {
          called = true;
        })
        .catch((e: unknown) => e);
      // The lock call's own error, as before, and the callback was not called.
      expect(error).toBeInstanceOf(Failure);
      if (error instanceof ConnectionError)
        expect(error).toMatchObject({ operation: 'lockArtifact', mayHaveRun: true });
      expect(called).toBe(false);
      // The call's three attempts, then one more with its key, which the server answered with what
      // the first had done: it had taken the lock. Released with one unlock.
      const locks = lossy.locks();
      expect(locks.map((l) => l.replayed)).toEqual([null, 'true', 'true', 'true']);
      expect(new Set(locks.map((l) => l.idempotencyKey)).size).toBe(1);
      expect(lossy.unlocks()).toHaveLength(1);
      expect((await owner.artifacts.get(doc.id)).lockedBy).toBeUndefined();
      expect((await rival.artifacts.lock(doc.id)).lockedBy).toBe(rival.participantId);
      expect(lines.warn).toEqual([]);
    },
    30_000,
  );

  it('asks again as any call does: after a 503 (its Retry-After), and the lock is released', async () => {
    const { owner } = await ownedSpace(client());
    const lossy = lossyLocks('lose', 'lose', 'lose', async () => unavailable('0')(), 'forward');
    const me = await participant(owner, 'Patient', client({ fetch: lossy.impl }));
    const doc = await me.artifacts.create({ name: 'doc', content: 'x' });
    await expect(me.artifacts.withLock(doc.id, () => 'never')).rejects.toBeInstanceOf(ConnectionError);
    // The 503 came in the server's place (nothing replayed); the attempt after it was replayed.
    expect(lossy.locks().map((l) => l.replayed)).toEqual([null, 'true', 'true', undefined, 'true']);
    expect(lossy.unlocks()).toHaveLength(1);
    expect((await owner.artifacts.get(doc.id)).lockedBy).toBeUndefined();
  });

  it('warns, releasing nothing, while the server says the lock call still runs there (409 duplicate_request)', async () => {
    const { owner } = await ownedSpace(client());
    const busy = async () =>
      new Response(
        JSON.stringify({
          error: 'a request with this Idempotency-Key is still being processed; retry it later',
          code: 'duplicate_request',
        }),
        { status: 409, headers: { 'content-type': 'application/json' } },
      );
    const { lines, options } = recordingLogger();
    const lossy = lossyLocks('lose', 'lose', 'lose', busy);
    const me = await participant(owner, 'Early', client({ fetch: lossy.impl, ...options }));
    const doc = await me.artifacts.create({ name: 'doc', content: 'x' });
    await expect(me.artifacts.withLock(doc.id, () => 'never')).rejects.toBeInstanceOf(ConnectionError);
    // A 409 is not asked again (no call is): the call may yet take the lock, and the log says so.
    expect(lossy.locks()).toHaveLength(4);
    expect(lossy.unlocks()).toEqual([]);
    expect(lines.warn).toEqual([
      expect.stringMatching(
        /; asking again failed \(409 a request with this Idempotency-Key is still being processed; retry it later\): the lock may stay held until about /,
      ),
    ]);
    expect((await owner.artifacts.get(doc.id)).lockedBy).toBe(me.participantId);
  });

  it('releases nothing when the lock is someone else’s (423): the owner’s withLock never unlocks another participant’s lock', async () => {
    const lossy = lossyLocks('lose', 'lose', 'lose');
    const { owner } = await ownedSpace(client({ fetch: lossy.impl }));
    const holder = await participant(owner, 'Holder', client());
    const doc = await holder.artifacts.create({ name: 'doc', content: 'x' });
    const held = await holder.artifacts.lock(doc.id);
    // Every attempt of the owner's lock call was refused (423), and each refusal was lost.
    const error = await owner.artifacts.withLock(doc.id, () => 'never').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    // One more lock, answered 423 again: nothing of the owner's to release, and no unlock sent.
    expect(lossy.locks()).toHaveLength(4);
    expect(lossy.unlocks()).toEqual([]);
    expect(await owner.artifacts.get(doc.id)).toMatchObject({
      lockedBy: holder.participantId,
      lockExpiresAt: held.lockExpiresAt,
    });
    expect((await holder.artifacts.write(doc.id, 'still mine')).version).toBe(2);
  });

  it('makes no check when the lock call certainly never reached the server', async () => {
    const { owner } = await ownedSpace(client());
    const never = async () => Promise.reject(refused());
    const lossy = lossyLocks(never, never, never);
    const me = await participant(owner, 'Offline', client({ fetch: lossy.impl }));
    const doc = await me.artifacts.create({ name: 'doc', content: 'x' });
    const error = await me.artifacts.withLock(doc.id, () => 'never').catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'ConnectionError', code: 'ECONNREFUSED', mayHaveRun: false });
    expect(lossy.locks()).toHaveLength(3);
    expect(lossy.unlocks()).toEqual([]);
  });

  it('releases the lock when the caller’s signal ends the lock call while it is out; an aborted signal sends nothing', async () => {
    const { owner } = await ownedSpace(client());
    const controller = new AbortController();
    const lossy = lossyLocks(async (forward) => {
      await (await forward()).text();
      // The caller gives up while the answer is on its way: fetch rejects as its signal aborts.
      controller.abort();
      throw new DOMException('This operation was aborted', 'AbortError');
    });
    const me = await participant(owner, 'Hasty', client({ fetch: lossy.impl }));
    const doc = await me.artifacts.create({ name: 'doc', content: 'x' });
    const error = await me.artifacts
      .withLock(doc.id, () => 'never', { signal: controller.signal })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortError);
    // The check and the unlock are made all the same, as withLock's unlock is after an abort.
    expect(lossy.locks().map((l) => l.replayed)).toEqual([null, 'true']);
    expect(lossy.unlocks()).toHaveLength(1);
    expect((await owner.artifacts.get(doc.id)).lockedBy).toBeUndefined();

    await expect(
      me.artifacts.withLock(doc.id, () => 'never', { signal: AbortSignal.abort() }),
    ).rejects.toBeInstanceOf(AbortError);
    expect(lossy.locks()).toHaveLength(2);
  });

  it('rejects within the ordinary attempts when the server is gone, and logs until when the lock may stay held', async () => {
    const own = await startServer({ LOCK_TTL_S: '600' });
    try {
      const { owner } = await ownedSpace(hub({ baseUrl: own.url }));
      let stopped = 0;
      // The server takes the lock, and goes away before its answer arrives.
      const lossy = lossyLocks(async (forward) => {
        await (await forward()).text();
        await own.stop();
        stopped = Date.now();
        throw reset();
      });
      const { lines, options } = recordingLogger();
      const me = await participant(
        owner,
        'Stranded',
        hub({ baseUrl: own.url, fetch: lossy.impl, ...options }),
      );
      const doc = await me.artifacts.create({ name: 'doc', content: 'x' });
      const error = await me.artifacts.withLock(doc.id, () => 'never').catch((e: unknown) => e);
      const took = Date.now() - stopped;
      expect(error).toMatchObject({ name: 'ConnectionError', code: 'ECONNREFUSED', mayHaveRun: true });
      // The call's three attempts and the check's three, each after a backoff of at most 0.5 s
      // then 1 s: not the lock's 10 minutes.
      expect(lossy.locks()).toHaveLength(6);
      expect(took).toBeLessThan(6_000);
      expect(lines.warn).toHaveLength(1);
      expect(lines.warn[0]).toMatch(
        new RegExp(`artifact ${doc.id}.*may stay held until about \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z`),
      );
      // As it said: the server, back, still has the lock the call took.
      await own.restart();
      expect((await owner.artifacts.get(doc.id)).lockedBy).toBe(me.participantId);
    } finally {
      await own.close();
    }
    // Its own server started, stopped and started again: 16 s alone, over 60 s once beside a full run.
  }, 120_000);

  // On the shared server, whose locks live 3 s.
  it('leaves alone the lock its call took once that has lapsed and someone else holds it', async () => {
    const { owner } = await ownedSpace();
    const rival = await participant(owner, 'Rival');
    const doc = await owner.artifacts.create({ name: 'doc', content: 'x' });
    // The owner's lock is taken and its answer lost; its check reaches the server only once the
    // lock has lapsed and the rival has taken it: the server replays a lock that is no longer held.
    const lossy = lossyLocks('lose', async (forward) => {
      await until(
        () =>
          rival.artifacts.lock(doc.id).then(
            () => true,
            (error: unknown) => (error instanceof LockedError ? undefined : Promise.reject(error)),
          ),
        20_000,
      );
      return forward();
    });
    const impatient = hub({ fetch: lossy.impl, maxRetries: 0 }).space(
      owner.spaceId,
      owner.key,
      owner.participantId,
    );
    await expect(impatient.artifacts.withLock(doc.id, () => 'never')).rejects.toBeInstanceOf(ConnectionError);
    expect(lossy.locks().map((l) => l.replayed)).toEqual([null, 'true']);
    expect(lossy.unlocks()).toEqual([]);
    expect((await owner.artifacts.get(doc.id)).lockedBy).toBe(rival.participantId);
  }, 30_000);
});

// A lock of the real 10 minutes (the shared server's 3 s locks are heartbeated every second):
// trial 51 found a callback running for minutes in a space already closed, its first heartbeat
// being due 200 s after the lock was taken.
describe('withLock in a space that closes while the callback runs', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ LOCK_TTL_S: '600' });
  });
  afterAll(() => server?.close());

  it('aborts doc.signal within 30 s, with the heartbeat’s 401 space_closed as its reason', async () => {
    const { owner } = await ownedSpace(hub({ baseUrl: server.url }));
    const me = await participant(owner, 'Writer', hub({ baseUrl: server.url }));
    const doc = await me.artifacts.create({ name: 'doc', content: '' });
    let closedAt = 0;
    const reason = await me.artifacts.withLock(doc.id, async (locked) => {
      await owner.close();
      closedAt = Date.now();
      return new Promise<unknown>((resolve) =>
        locked.signal.addEventListener('abort', () => resolve(locked.signal.reason)),
      );
    });
    // The heartbeats of a 10-minute lock come 30 s apart, not 200 s: the first one after the close.
    expect(Date.now() - closedAt).toBeLessThan(35_000);
    expect(reason).toMatchObject({ name: 'AuthenticationError', status: 401, code: 'space_closed' });
  }, 60_000);
});
