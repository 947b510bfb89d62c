import { describe, expect, it } from 'vitest';
import {
  AbortError,
  type ClientOptions,
  ConflictError,
  ConnectionError,
  LockedError,
  NotFoundError,
  PermissionDeniedError,
  type SpaceClient,
  UnlockError,
} from '../src';
import { hub, ownedSpace, participant, unavailable, until } from './helpers';
import { startServer } from './helpers/server';

/**
 * A fetch that answers the requests `matches` picks with `fail` (a Response in the server's place,
 * or a thrown error) while `failing()` says so, and forwards everything else to the server.
 */
function failingFetch(
  matches: (method: string, url: string) => boolean,
  fail: () => Response | Promise<Response>,
  failing: (count: number) => boolean,
) {
  const seen = { matched: 0 };
  const impl: typeof fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!matches(init?.method ?? 'GET', url)) return fetch(input, init);
    seen.matched++;
    if (failing(seen.matched)) return fail();
    return fetch(input, init);
  };
  return { impl, seen };
}

const isUnlock = (method: string, url: string) => method === 'DELETE' && url.endsWith('/lock');

/** One lock call (`POST …/lock`) a recording fetch saw: when it went out and was answered, its key, its answer's status. */
interface LockCall {
  sent: number;
  key: string | null;
  answered?: number;
  status?: number;
}

/** A fetch that forwards everything to the server and records each lock call. */
function recordedLocks() {
  const locks: LockCall[] = [];
  const impl: typeof fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (init?.method !== 'POST' || !url.endsWith('/lock')) return fetch(input, init);
    const call: LockCall = { sent: Date.now(), key: new Headers(init.headers).get('idempotency-key') };
    locks.push(call);
    const response = await fetch(input, init);
    call.answered = Date.now();
    call.status = response.status;
    return response;
  };
  /** The time from one lock call's answer to the next call, in ms: the SDK's pause, without the server's time. */
  const pauses = () => locks.slice(1).map((call, i) => call.sent - locks[i]!.answered!);
  return { impl, locks, pauses };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('artifacts', () => {
  it('creates, lists, reads and downloads', async () => {
    const { owner } = await ownedSpace();
    const me = await participant(owner);
    const created = await me.artifacts.create({ name: 'plan', content: '# Plan\n' });
    expect(created).toMatchObject({ name: 'plan', type: 'markdown', version: 1, content: '# Plan\n' });
    expect(created.createdBy).toBe(me.participantId);
    const empty = await me.artifacts.create({ name: 'notes' });
    expect(empty.content).toBe('');

    const { artifacts } = await owner.artifacts.list();
    expect(artifacts.map((a) => a.name).sort()).toEqual(['notes', 'plan']);
    expect(await owner.artifacts.get(created.id)).toMatchObject({ id: created.id, content: '# Plan\n' });
    const { data: file, response } = await owner.artifacts.download(created.id).withResponse();
    expect(file).toBe('# Plan\n');
    expect(response.headers.get('content-disposition')).toContain('plan.md');
    await expect(owner.artifacts.get('00000000-0000-4000-8000-000000000000')).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it('says of a 404 for a name given as an id that it is no id', async () => {
    const { owner } = await ownedSpace();
    await owner.artifacts.create({ name: 'plan.md' });
    for (const call of [
      (): PromiseLike<unknown> => owner.artifacts.get('plan.md'),
      (): PromiseLike<unknown> => owner.artifacts.withLock('plan.md', () => 'never'),
      (): PromiseLike<unknown> => owner.artifacts.lock('plan.md'),
    ]) {
      const error = await Promise.resolve()
        .then(call)
        .catch((e: unknown) => e);
      // Still the server's 404, as code that catches a NotFoundError expects.
      expect(error).toBeInstanceOf(NotFoundError);
      expect((error as NotFoundError).message).toBe(
        '404 artifact not found (artifactId takes an id, a UUID: artifacts.list() has them)',
      );
    }
    // Another id's words name it.
    const error = await owner.participants.kick('Bob').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as Error).message).toMatch(/ \(participantId takes an id, a UUID\)$/);
    // A well-formed id of nothing: the 404 alone.
    const absent = await owner.artifacts.get('00000000-0000-4000-8000-000000000000').catch((e: unknown) => e);
    expect((absent as Error).message).toBe('404 artifact not found');
  });

  it('locks, writes, heartbeats and unlocks; a lock held elsewhere is a LockedError', async () => {
    const { owner } = await ownedSpace();
    const alice = await participant(owner, 'Alice');
    const bob = await participant(owner, 'Bob');
    const doc = await alice.artifacts.create({ name: 'doc', content: 'v1' });

    const lock = await alice.artifacts.lock(doc.id);
    expect(lock.lockedBy).toBe(alice.participantId);
    const error = await bob.artifacts.lock(doc.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockedError);
    expect(error).toMatchObject({
      status: 423,
      lockedBy: alice.participantId,
      lockExpiresAt: lock.lockExpiresAt,
    });
    await expect(bob.artifacts.write(doc.id, 'not mine')).rejects.toBeInstanceOf(LockedError);

    const written = await alice.artifacts.write(doc.id, 'v2');
    expect(written).toMatchObject({ version: 2, content: 'v2', lockedBy: alice.participantId });
    const conflict = await alice.artifacts.write(doc.id, 'v3?', { baseVersion: 1 }).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(ConflictError);
    expect((conflict as ConflictError).version).toBe(2);
    expect((conflict as ConflictError).body?.version).toBe(2);
    expect((await alice.artifacts.write(doc.id, 'v3', { baseVersion: 2 })).version).toBe(3);

    const beat = await alice.artifacts.heartbeat(doc.id);
    expect(beat.lockedBy).toBe(alice.participantId);
    const unlocked = await alice.artifacts.unlock(doc.id);
    expect(unlocked.lockedBy).toBeUndefined();
    expect((await bob.artifacts.lock(doc.id)).lockedBy).toBe(bob.participantId);
  });

  it('reads the history, a version, a diff, and restores a version', async () => {
    const { owner } = await ownedSpace();
    const doc = await owner.artifacts.create({ name: 'doc', content: 'one\n' });
    // Locks live 3 s on this server (LOCK_TTL_S): withLock keeps them alive however slow the machine.
    await owner.artifacts.withLock(doc.id, (locked) => locked.write('one\ntwo\n'));
    const { versions } = await owner.artifacts.history(doc.id);
    expect(versions.map((v) => v.version)).toEqual([2, 1]);
    expect((await owner.artifacts.version(doc.id, 1)).content).toBe('one\n');
    const diff = await owner.artifacts.diff(doc.id, 1, 2);
    expect(diff).toContain('+two');
    const restored = await owner.artifacts.withLock(doc.id, () => owner.artifacts.restore(doc.id, 1));
    expect(restored).toMatchObject({ version: 3, content: 'one\n' });
    await expect(owner.artifacts.version(doc.id, 9)).rejects.toBeInstanceOf(NotFoundError);
    // What is plainly no version number is said as such, not taken for a version not written yet.
    await expect(owner.artifacts.version(doc.id, 1.5)).rejects.toThrow(
      'version must be a version number (1, 2, …), not 1.5',
    );
    await expect(owner.artifacts.diff(doc.id, 0, 1)).rejects.toThrow('from must be a version number');
    await expect(owner.artifacts.restore(doc.id, -1)).rejects.not.toBeInstanceOf(NotFoundError);
  });

  describe('withLock', () => {
    it('locks, hands over the content, writes and unlocks', async () => {
      const { owner } = await ownedSpace();
      const me = await participant(owner);
      const doc = await me.artifacts.create({ name: 'doc', content: 'a\n' });
      const result = await me.artifacts.withLock(doc.id, async (locked) => {
        expect(locked.content).toBe('a\n');
        expect(locked.version).toBe(1);
        expect((await owner.artifacts.get(doc.id)).lockedBy).toBe(me.participantId);
        await locked.write(`${locked.content}b\n`);
        expect(locked.version).toBe(2);
        return 'done';
      });
      expect(result).toBe('done');
      const after = await owner.artifacts.get(doc.id);
      expect(after).toMatchObject({ version: 2, content: 'a\nb\n' });
      expect(after.lockedBy).toBeUndefined();
    });

    it('unlocks when the callback throws, and rethrows its error', async () => {
      const { owner } = await ownedSpace();
      const me = await participant(owner);
      const doc = await me.artifacts.create({ name: 'doc', content: 'x' });
      const failure = new Error('the callback failed');
      await expect(
        me.artifacts.withLock(doc.id, async (locked) => {
          await locked.write('half done');
          throw failure;
        }),
      ).rejects.toBe(failure);
      const after = await owner.artifacts.get(doc.id);
      expect(after.lockedBy).toBeUndefined();
      expect(after.content).toBe('half done');
    });

    it('ends the callback’s signal and its writes when the caller’s signal aborts, and unlocks', async () => {
      const { owner } = await ownedSpace();
      const me = await participant(owner);
      const doc = await me.artifacts.create({ name: 'doc', content: 'x' });
      const controller = new AbortController();
      const seen = await me.artifacts.withLock(
        doc.id,
        async (locked) => {
          controller.abort();
          const aborted = locked.signal.aborted;
          const write = await locked.write('after the abort').then(
            () => 'written',
            (error: Error) => error.name,
          );
          return { aborted, write };
        },
        { signal: controller.signal },
      );
      expect(seen).toEqual({ aborted: true, write: 'AbortError' });
      const after = await owner.artifacts.get(doc.id);
      expect(after).toMatchObject({ version: 1, content: 'x' });
      expect(after.lockedBy).toBeUndefined();
    });

    it('does not call the callback when the lock is held elsewhere', async () => {
      const { owner } = await ownedSpace();
      const me = await participant(owner);
      const doc = await owner.artifacts.create({ name: 'doc', content: 'x' });
      await owner.artifacts.lock(doc.id);
      let called = false;
      await expect(
        me.artifacts.withLock(doc.id, () => {
          called = true;
        }),
      ).rejects.toBeInstanceOf(LockedError);
      expect(called).toBe(false);
      expect((await owner.artifacts.get(doc.id)).lockedBy).toBe(owner.participantId);
    });

    // The shared test server runs with LOCK_TTL_S=3: a callback of more than two lifetimes
    // keeps the lock only through heartbeats.
    it('keeps the lock alive through a callback longer than the lock lifetime', async () => {
      const { owner } = await ownedSpace();
      const me = await participant(owner, 'Slow');
      const rival = await participant(owner, 'Rival');
      const doc = await me.artifacts.create({ name: 'doc', content: 'start' });
      const lifetimeMs = 3000;

      await me.artifacts.withLock(doc.id, async (locked) => {
        const started = Date.now();
        const firstExpiry = Date.parse(locked.lockExpiresAt);
        // Wait until the lock the callback started with would long have lapsed without heartbeats.
        await until(async () => (Date.now() - started > 2.5 * lifetimeMs ? true : undefined), 30_000);
        expect(Date.parse(locked.lockExpiresAt)).toBeGreaterThan(firstExpiry);
        const refused = await rival.artifacts.lock(doc.id).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(LockedError);
        expect((refused as LockedError).lockedBy).toBe(me.participantId);
        await locked.write('finished after a long think');
        expect(locked.signal.aborted).toBe(false);
      });
      expect(await owner.artifacts.get(doc.id)).toMatchObject({
        version: 2,
        content: 'finished after a long think',
      });
      expect((await rival.artifacts.lock(doc.id)).lockedBy).toBe(rival.participantId);
    }, 60_000);

    it('sends each heartbeat an interval after the previous one was sent, however slow its answer', async () => {
      const beats: { sent: number; answered: number }[] = [];
      // Every heartbeat answers 600 ms late, longer than the 500 ms interval.
      const slow: typeof fetch = async (input, init) => {
        const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
        if (!url.endsWith('/heartbeat')) return fetch(input, init);
        const beat = { sent: Date.now(), answered: 0 };
        beats.push(beat);
        await new Promise((resolve) => setTimeout(resolve, 600));
        const response = await fetch(input, init);
        beat.answered = Date.now();
        return response;
      };
      const { owner } = await ownedSpace();
      const me = await participant(owner, 'Far away', hub({ fetch: slow }));
      const doc = await me.artifacts.create({ name: 'doc', content: 'x' });
      await me.artifacts.withLock(
        doc.id,
        () => until(() => (beats.filter((b) => b.answered > 0).length >= 3 ? true : undefined), 30_000),
        { heartbeatIntervalMs: 500 },
      );
      // Once an answer is in, the next beat goes at once when the interval is already over (it
      // waited a whole interval more, 500 ms, before).
      for (let i = 1; i < 3; i++) {
        const due = Math.max(beats[i - 1]!.sent + 500, beats[i - 1]!.answered);
        expect(beats[i]!.sent - due).toBeLessThan(300);
      }
    }, 60_000);

    it('heartbeats at most every 500 ms, whatever heartbeatIntervalMs says (0 spent the key’s rate limit)', async () => {
      let beats = 0;
      const counting: typeof fetch = (input, init) => {
        if (String(input).endsWith('/heartbeat')) beats++;
        return fetch(input, init);
      };
      const { owner } = await ownedSpace();
      const me = await participant(owner, 'Eager', hub({ fetch: counting }));
      const doc = await me.artifacts.create({ name: 'doc', content: 'x' });
      for (const heartbeatIntervalMs of [0, 1]) {
        beats = 0;
        await me.artifacts.withLock(doc.id, () => new Promise((resolve) => setTimeout(resolve, 1_300)), {
          heartbeatIntervalMs,
        });
        expect(beats, `heartbeatIntervalMs ${heartbeatIntervalMs}`).toBeGreaterThanOrEqual(1);
        expect(beats, `heartbeatIntervalMs ${heartbeatIntervalMs}`).toBeLessThanOrEqual(3);
      }
      // Infinity is never: no heartbeat (Node fired it at once, and at once again).
      beats = 0;
      await me.artifacts.withLock(doc.id, () => new Promise((resolve) => setTimeout(resolve, 300)), {
        heartbeatIntervalMs: Number.POSITIVE_INFINITY,
      });
      expect(beats).toBe(0);
    });

    it('gives an idempotencyKey to the lock only: every heartbeat is a fresh write that extends the lock', async () => {
      const beats: { key: string | null; replayed: string | null }[] = [];
      const recording: typeof fetch = async (input, init) => {
        const response = await fetch(input, init);
        if (String(input).endsWith('/heartbeat'))
          beats.push({
            key: new Headers(init?.headers).get('idempotency-key'),
            replayed: response.headers.get('idempotency-replayed'),
          });
        return response;
      };
      const { owner } = await ownedSpace();
      const me = await participant(owner, 'Careful', hub({ fetch: recording }));
      const doc = await me.artifacts.create({ name: 'doc', content: 'x' });
      const expiries = await me.artifacts.withLock(
        doc.id,
        async (locked) => {
          const seen: string[] = [];
          await until(() => {
            if (seen.at(-1) !== locked.lockExpiresAt) seen.push(locked.lockExpiresAt);
            return beats.length >= 3 ? true : undefined;
          }, 30_000);
          return seen;
        },
        { idempotencyKey: crypto.randomUUID(), heartbeatIntervalMs: 500 },
      );
      // A replayed heartbeat would answer the first one's expiry again, and the lock would lapse.
      expect(beats.map((b) => b.replayed)).toEqual([null, null, null]);
      expect(new Set(beats.map((b) => b.key)).size).toBe(3);
      expect(expiries.length).toBeGreaterThanOrEqual(3);
    });

    it('lets one withLock of a key run at a time in a process: a second is refused, its callback not called', async () => {
      const { owner } = await ownedSpace();
      const me = await participant(owner, 'Worker');
      const doc = await me.artifacts.create({ name: 'doc', content: '0' });
      // Another client of the same key, as a second task of the same agent would make.
      const again = hub().space(me.spaceId, me.key, me.participantId);
      let inside = 0;
      let most = 0;
      const task = (client: typeof me, tag: string) =>
        client.artifacts.withLock(doc.id, async (locked) => {
          most = Math.max(most, ++inside);
          await new Promise((resolve) => setTimeout(resolve, 300));
          const written = await locked.write(locked.content + tag);
          inside--;
          return written.version;
        });
      const results = await Promise.allSettled([task(me, 'a'), task(again, 'b'), task(me, 'c')]);
      expect(most).toBe(1);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results.filter((r) => r.status === 'rejected'))
        expect((r as PromiseRejectedResult).reason).toBeInstanceOf(LockedError);
      // Nothing written was lost, and the lock was released once.
      const after = await me.artifacts.get(doc.id);
      expect(after.version).toBe(2);
      expect(after.lockedBy).toBeUndefined();
      // Ended: the same key may take it again.
      expect(await me.artifacts.withLock(doc.id, (locked) => locked.version)).toBe(2);
    });

    it('refuses a nested withLock naming its own participant as the holder, not as a lock nobody holds', async () => {
      const { owner } = await ownedSpace();
      const me = await participant(owner, 'Nester');
      const doc = await me.artifacts.create({ name: 'doc', content: '0' });
      // A client of the same key that was not told its participantId learns it from the holder.
      const keyOnly = hub().space(me.spaceId, me.key);
      let called = false;
      const refusals = await me.artifacts.withLock(doc.id, async () => {
        const refusal = async (client: SpaceClient) =>
          client.artifacts
            .withLock(doc.id, () => {
              called = true;
            })
            .catch((error: unknown) => error);
        return [await refusal(me), await refusal(keyOnly)];
      });
      expect(called).toBe(false);
      for (const refused of refusals) {
        expect(refused).toBeInstanceOf(LockedError);
        expect(refused).toMatchObject({
          status: 423,
          code: 'lock_held',
          lockedBy: me.participantId,
          requestId: undefined,
        });
        expect((refused as LockedError).message).toMatch(
          /^artifact [0-9a-f-]{36} is held by your own withLock still: withLock is not re-entrant$/,
        );
        expect(JSON.parse(JSON.stringify(refused))).toMatchObject({ lockedBy: me.participantId });
      }
      // Released once, by the outer withLock.
      expect((await me.artifacts.get(doc.id)).lockedBy).toBeUndefined();
    });

    it('writes on the version it holds: a write made meanwhile with the same key is a conflict, not overwritten', async () => {
      const { owner } = await ownedSpace();
      const me = await participant(owner, 'Twin');
      const doc = await me.artifacts.create({ name: 'doc', content: 'base' });
      const refused = await me.artifacts.withLock(doc.id, async (locked) => {
        // The same participant (another process of it) holds the same lock, and writes.
        await me.artifacts.write(doc.id, 'the other process');
        return locked.write(`${locked.content} and mine`).catch((error: unknown) => error);
      });
      expect(refused).toBeInstanceOf(ConflictError);
      expect((refused as ConflictError).version).toBe(2);
      expect(await me.artifacts.get(doc.id)).toMatchObject({ version: 2, content: 'the other process' });
    });

    // LOCK_TTL_S=3 on the shared test server: the outage is longer than the ordinary retries
    // (three attempts) and shorter than the lock's lifetime.
    it('keeps unlocking through an outage longer than its retries, and resolves only once unlocked', async () => {
      const { owner } = await ownedSpace();
      const failing = failingFetch(isUnlock, unavailable('0'), (n) => n <= 6);
      const me = await participant(owner, 'Persistent', hub({ fetch: failing.impl }));
      const doc = await me.artifacts.create({ name: 'doc', content: 'x' });
      const result = await me.artifacts.withLock(doc.id, (locked) => locked.write('y').then(() => 'done'));
      expect(result).toBe('done');
      expect(failing.seen.matched).toBe(7);
      // Released, not left to lapse: others may take it at once.
      expect((await owner.artifacts.get(doc.id)).lockedBy).toBeUndefined();
    });

    it('when every unlock fails, resolves only once the lock has lapsed', async () => {
      const { owner } = await ownedSpace();
      const rival = await participant(owner, 'Rival');
      const failing = failingFetch(isUnlock, unavailable('1'), () => true);
      const me = await participant(owner, 'Stuck', hub({ fetch: failing.impl }));
      const doc = await me.artifacts.create({ name: 'doc', content: 'x' });
      const started = Date.now();
      expect(await me.artifacts.withLock(doc.id, () => 'done')).toBe('done');
      // Not before the lock's lifetime (3 s) was over: until then it was still held.
      expect(Date.now() - started).toBeGreaterThan(2_500);
      expect((await owner.artifacts.get(doc.id)).lockedBy).toBeUndefined();
      expect((await rival.artifacts.lock(doc.id)).lockedBy).toBe(rival.participantId);
    }, 30_000);

    it('rejects with an UnlockError carrying the callback’s outcome when the signal ends the wait for the unlock', async () => {
      const { owner } = await ownedSpace();
      const failing = failingFetch(isUnlock, unavailable('0'), () => true);
      const me = await participant(owner, 'Impatient', hub({ fetch: failing.impl }));
      const doc = await me.artifacts.create({ name: 'doc', content: 'x' });
      const controller = new AbortController();
      const error = await me.artifacts
        .withLock(
          doc.id,
          (locked) => {
            controller.abort();
            return locked.version;
          },
          { signal: controller.signal },
        )
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnlockError);
      const unlockError = error as UnlockError<number>;
      expect(unlockError.outcome).toEqual({ status: 'fulfilled', value: 1 });
      expect(unlockError.artifactId).toBe(doc.id);
      expect(unlockError.cause).toMatchObject({ status: 503 });
      expect(unlockError.message).toContain('the signal ended the wait');
      // The ordinary attempts were made all the same, and the lock is indeed still held.
      expect(failing.seen.matched).toBe(3);
      expect(Date.parse(unlockError.lockExpiresAt)).toBeGreaterThan(Date.now());
      expect((await owner.artifacts.get(doc.id)).lockedBy).toBe(me.participantId);
    });

    it('rejects with the callback’s error in the UnlockError when the callback threw', async () => {
      const { owner } = await ownedSpace();
      const failing = failingFetch(isUnlock, unavailable('0'), () => true);
      const me = await participant(owner, 'Thrower', hub({ fetch: failing.impl }));
      const doc = await me.artifacts.create({ name: 'doc', content: 'x' });
      const controller = new AbortController();
      const failure = new Error('the callback failed');
      const error = await me.artifacts
        .withLock(
          doc.id,
          () => {
            controller.abort();
            throw failure;
          },
          { signal: controller.signal },
        )
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnlockError);
      expect((error as UnlockError).outcome).toEqual({ status: 'rejected', reason: failure });
    });

    it('releases anyway, without waiting, once the key is dead (the participant removed)', async () => {
      const { owner } = await ownedSpace();
      const me = await participant(owner, 'Removed');
      const doc = await me.artifacts.create({ name: 'doc', content: 'x' });
      const started = Date.now();
      const result = await me.artifacts.withLock(
        doc.id,
        async () => {
          await owner.participants.kick(me.participantId!);
          return 'kicked';
        },
        { heartbeatIntervalMs: 60_000 },
      );
      expect(result).toBe('kicked');
      expect(Date.now() - started).toBeLessThan(2_500);
      expect((await owner.artifacts.get(doc.id)).lockedBy).toBeUndefined();
    });

    it('writes again with the key of a write whose answer was lost, and moves on to its version; reload reads it', async () => {
      const { owner } = await ownedSpace();
      // While `drop` counts down, each write runs on the server and its answer is lost.
      let drop = 0;
      const dropping: typeof fetch = async (input, init) => {
        const response = await fetch(input, init);
        if (drop > 0 && init?.method === 'PATCH') {
          drop--;
          await response.text();
          throw new TypeError('fetch failed', { cause: new Error('other side closed') });
        }
        return response;
      };
      const me = await participant(owner, 'Unlucky', hub({ fetch: dropping }));
      const doc = await me.artifacts.create({ name: 'doc', content: 'one' });
      const seen = await me.artifacts.withLock(doc.id, async (locked) => {
        drop = 3;
        const lost = await locked.write('two').catch((e: unknown) => e);
        expect(lost).toBeInstanceOf(ConnectionError);
        expect((lost as ConnectionError).mayHaveRun).toBe(true);
        const afterLoss = locked.version;
        // The same write, with the same key: replayed, and this document is at its version.
        const replayed = await locked.write(
          'two',
          {},
          { idempotencyKey: (lost as ConnectionError).idempotencyKey },
        );
        const afterReplay = locked.version;
        const next = await locked.write('three');
        return { afterLoss, afterReplay, replayed: replayed.version, next: next.version };
      });
      expect(seen).toEqual({ afterLoss: 1, afterReplay: 2, replayed: 2, next: 3 });
      expect(await owner.artifacts.get(doc.id)).toMatchObject({ version: 3, content: 'three' });

      const reloaded = await me.artifacts.withLock(doc.id, async (locked) => {
        drop = 3;
        await locked.write('four').catch(() => undefined);
        const stale = locked.version;
        const current = await locked.reload();
        return {
          stale,
          reloaded: locked.version,
          content: locked.content,
          current: current.version,
          next: (await locked.write('five')).version,
        };
      });
      expect(reloaded).toEqual({ stale: 3, reloaded: 4, content: 'four', current: 4, next: 5 });
    });

    // LOCK_TTL_S=3 on the shared test server.
    it('aborts the callback signal once the lock lapses unrenewed, without waiting for a heartbeat', async () => {
      const { owner } = await ownedSpace();
      const me = await participant(owner, 'Stalled');
      const doc = await me.artifacts.create({ name: 'doc', content: 'x' });
      const started = Date.now();
      // Heartbeats far apart, as when they are refused or stuck: the lock lapses at 3 s.
      const reason = await me.artifacts.withLock(
        doc.id,
        async (locked) => {
          await until(() => (locked.signal.aborted ? true : undefined), 10_000);
          return locked.signal.reason;
        },
        { heartbeatIntervalMs: 60_000 },
      );
      expect(reason).toBeInstanceOf(LockedError);
      expect(reason).toMatchObject({ code: 'lock_not_held' });
      expect((reason as Error).message).toContain('lapsed');
      expect(Date.now() - started).toBeLessThan(6_000);
    }, 20_000);

    it('stops heartbeating once the lock has lapsed unrenewed: the callback was told, nothing more is said', async () => {
      const { owner } = await ownedSpace();
      // Every heartbeat fails as a server that does not answer would (no retry: a beat is a try).
      const beats: number[] = [];
      const failing = failingFetch(
        (method, url) => method === 'POST' && url.endsWith('/lock/heartbeat'),
        () => {
          beats.push(Date.now());
          throw new TypeError('fetch failed');
        },
        () => true,
      );
      const warnings: string[] = [];
      const logger = { debug() {}, info() {}, warn: (line: string) => warnings.push(line), error() {} };
      const me = await participant(
        owner,
        'Cut off',
        hub({ fetch: failing.impl, logger, logLevel: 'warn', maxRetries: 0 }),
      );
      const doc = await me.artifacts.create({ name: 'doc', content: 'x' });
      const lapsedAt = await me.artifacts.withLock(
        doc.id,
        async (locked) => {
          await until(() => (locked.signal.aborted ? true : undefined), 10_000);
          const at = Date.now();
          // Long enough for three more beats at this interval, were they still sent.
          await new Promise((resolve) => setTimeout(resolve, 1_500));
          return at;
        },
        { heartbeatIntervalMs: 500 },
      );
      expect(beats.length).toBeGreaterThan(2);
      expect(beats.filter((at) => at > lapsedAt + 50)).toEqual([]);
      expect(warnings.filter((line) => line.includes('heartbeat of artifact'))).toHaveLength(
        beats.filter((at) => at <= lapsedAt + 50).length,
      );
    }, 20_000);

    it('aborts the callback signal when the lock is lost; a write then throws the LockedError naming the holder', async () => {
      const { owner } = await ownedSpace();
      const me = await participant(owner);
      const doc = await me.artifacts.create({ name: 'doc', content: 'x' });
      const { reason, refused } = await me.artifacts.withLock(
        doc.id,
        async (locked) => {
          // The owner force-unlocks it and takes it: the next heartbeat answers 423.
          await owner.artifacts.unlock(doc.id);
          await owner.artifacts.lock(doc.id);
          await until(() => (locked.signal.aborted ? true : undefined));
          return {
            reason: locked.signal.reason,
            refused: await locked.write('too late').catch((error: unknown) => error),
          };
        },
        { heartbeatIntervalMs: 100 },
      );
      expect(reason).toBeInstanceOf(LockedError);
      // Not a bare 'aborted': the lock is someone else's now, and nothing was written.
      expect(refused).toBeInstanceOf(LockedError);
      expect((refused as LockedError).lockedBy).toBe(owner.participantId);
      // The owner's lock was left alone.
      expect(await owner.artifacts.get(doc.id)).toMatchObject({
        lockedBy: owner.participantId,
        content: 'x',
      });
    });

    it('says in a lost lock’s LockedError who saved since the document’s version (version, updatedBy), read after the refusal only', async () => {
      const { owner } = await ownedSpace();
      // The artifact's reads (GET …/artifact/{id}): withLock's own, then only a refused write's.
      const reads: string[] = [];
      const counting: typeof fetch = (input, init) => {
        if ((init?.method ?? 'GET') === 'GET' && /\/artifact\/[^/]+$/.test(String(input)))
          reads.push(String(input));
        return fetch(input, init);
      };
      const me = await participant(owner, 'Agent', hub({ fetch: counting }));
      const first = await me.artifacts.create({ name: 'first', content: 'one' });
      await me.artifacts.withLock(first.id, async (locked) => {
        await locked.write('two');
        await locked.write('three');
      });
      expect(reads).toHaveLength(1);
      const doc = await me.artifacts.create({ name: 'doc', content: 'one' });
      const refused = await me.artifacts.withLock(
        doc.id,
        async (locked) => {
          // The owner force-unlocks it, takes it and saves version 2 over the document's version 1.
          await owner.artifacts.unlock(doc.id);
          await owner.artifacts.lock(doc.id);
          await owner.artifacts.write(doc.id, 'theirs');
          return locked.write('mine').catch((error: unknown) => error);
        },
        { heartbeatIntervalMs: 60_000 },
      );
      expect(refused).toBeInstanceOf(LockedError);
      expect(refused).toMatchObject({
        code: 'lock_held',
        lockedBy: owner.participantId,
        version: 2,
        updatedBy: owner.participantId,
      });
      expect((refused as LockedError).message).toMatch(
        new RegExp(`; ${owner.participantId} saved version 2 since version 1$`),
      );
      expect(reads).toHaveLength(3);
      // Nothing saved since: said so.
      const again = await me.artifacts.create({ name: 'doc 2', content: 'one' });
      const unsaved = await me.artifacts.withLock(
        again.id,
        async (locked) => {
          await owner.artifacts.unlock(again.id);
          return locked.write('mine').catch((error: unknown) => error);
        },
        { heartbeatIntervalMs: 60_000 },
      );
      expect(unsaved).toMatchObject({ code: 'lock_not_held', version: 1, updatedBy: me.participantId });
      expect((unsaved as LockedError).message).toMatch(/; nobody saved since version 1$/);
    });

    it('reload() of a lock lost throws its LockedError and aborts doc.signal, holding what it read; the new holder’s lock is left alone', async () => {
      const { owner } = await ownedSpace();
      const me = await participant(owner);
      const doc = await me.artifacts.create({ name: 'doc', content: 'one' });
      const seen = await me.artifacts.withLock(
        doc.id,
        async (locked) => {
          // Still ours: a reload reads, and says nothing.
          const kept = await locked.reload();
          await owner.artifacts.unlock(doc.id);
          await owner.artifacts.lock(doc.id);
          await owner.artifacts.write(doc.id, 'theirs');
          const refused = await locked.reload().catch((error: unknown) => error);
          return {
            kept: kept.version,
            refused,
            aborted: locked.signal.aborted,
            reason: locked.signal.reason,
            held: { version: locked.version, content: locked.content },
          };
        },
        { heartbeatIntervalMs: 60_000 },
      );
      expect(seen.kept).toBe(1);
      expect(seen.refused).toBeInstanceOf(LockedError);
      expect(seen.refused).toMatchObject({
        status: 423,
        code: 'lock_held',
        lockedBy: owner.participantId,
        version: 2,
        updatedBy: owner.participantId,
      });
      // The server's 423, as a write would get it (a heartbeat's, asked on this path only).
      expect((seen.refused as LockedError).message).toMatch(
        new RegExp(
          `^423 artifact is locked by another participant .*; ${owner.participantId} saved version 2 since version 1$`,
        ),
      );
      expect(seen.aborted).toBe(true);
      expect(seen.reason).toBe(seen.refused);
      expect(seen.held).toEqual({ version: 2, content: 'theirs' });
      // No unlock followed: the owner's lock was left alone.
      expect(await owner.artifacts.get(doc.id)).toMatchObject({ lockedBy: owner.participantId });

      // Released and taken by nobody: lock_not_held.
      const free = await me.artifacts.create({ name: 'free', content: 'x' });
      const lapsed = await me.artifacts.withLock(
        free.id,
        async (locked) => {
          await owner.artifacts.unlock(free.id);
          return locked.reload().catch((error: unknown) => error);
        },
        { heartbeatIntervalMs: 60_000 },
      );
      expect(lapsed).toMatchObject({ code: 'lock_not_held', lockedBy: undefined, version: 1 });
      expect((lapsed as LockedError).message).toMatch(/^423 .*; nobody saved since version 1$/);
    });

    describe('waiting for a lock someone else holds (waitMs)', () => {
      it('waits, trying again after short pauses, each a new write, and writes once the holder has released it', async () => {
        const { owner } = await ownedSpace();
        const alice = await participant(owner, 'Alice');
        const recorded = recordedLocks();
        const bob = await participant(owner, 'Bob', hub({ fetch: recorded.impl }));
        const doc = await alice.artifacts.create({ name: 'doc', content: 'a\n' });
        let holding!: () => void;
        const held = new Promise<void>((resolve) => {
          holding = resolve;
        });
        const alices = alice.artifacts.withLock(doc.id, async (locked) => {
          holding();
          await pause(1000);
          return locked.write(`${locked.content}alice\n`);
        });
        await held;
        const started = Date.now();
        let calls = 0;
        const written = await bob.artifacts.withLock(
          doc.id,
          (locked) => {
            calls++;
            return locked.write(`${locked.content}bob\n`);
          },
          { waitMs: 5000 },
        );
        const waited = Date.now() - started;
        await alices;
        expect(calls).toBe(1);
        expect(written).toMatchObject({ version: 3, content: 'a\nalice\nbob\n' });
        expect(waited).toBeGreaterThan(700);
        expect(waited).toBeLessThan(4000);
        // Refused (423) until the release, then taken; every attempt a write of its own (the server
        // would replay the 423 of a key it has seen).
        const { locks } = recorded;
        expect(locks.length).toBeGreaterThanOrEqual(2);
        expect(locks.map((l) => l.status)).toEqual([...locks.slice(1).map(() => 423), 200]);
        expect(new Set(locks.map((l) => l.key)).size).toBe(locks.length);
        // It starts small: a lock released soon is taken soon.
        expect(recorded.pauses()[0]).toBeLessThan(400);
        expect((await owner.artifacts.get(doc.id)).lockedBy).toBeUndefined();
      });

      // On a server whose locks live 10 minutes: the shared server's 3 s locks lapse (and are
      // heartbeated) sooner than the pauses grow, and the wait never sleeps past a lapse.
      it('paces its attempts from about 200 ms up to 2 s apart, far under the rate limit', async () => {
        const own = await startServer({ LOCK_TTL_S: '600' });
        try {
          const client = (options: Partial<ClientOptions> = {}) => hub({ baseUrl: own.url, ...options });
          const { owner } = await ownedSpace(client());
          const alice = await participant(owner, 'Alice', client());
          const recorded = recordedLocks();
          const bob = await participant(owner, 'Bob', client({ fetch: recorded.impl }));
          const doc = await alice.artifacts.create({ name: 'doc', content: '' });
          await alice.artifacts.lock(doc.id);
          // Alice lets go in 7 s: her unlock's outcome is taken at once, and checked after the wait
          // (a wait that failed first closes this server, and the unlock meets it closed).
          const released = pause(7000)
            .then(() => alice.artifacts.unlock(doc.id))
            .then(
              () => 'released',
              (error: unknown) => error,
            );
          await bob.artifacts.withLock(doc.id, (locked) => locked.write('bob'), { waitMs: 20_000 });
          expect(await released).toBe('released');
          const pauses = recorded.pauses();
          // 0.2 + 0.4 + 0.8 + 1.6 + 2 + 2… s, less up to a quarter at random: about 8 calls in 7 s
          // (fewer on a slow machine, whose answers take time too).
          expect(recorded.locks.length).toBeGreaterThanOrEqual(5);
          expect(recorded.locks.length).toBeLessThanOrEqual(10);
          expect(pauses[0]).toBeLessThan(400);
          expect(Math.max(...pauses)).toBeGreaterThan(1400);
          expect(Math.max(...pauses)).toBeLessThan(2400);
        } finally {
          await own.close();
        }
      }, 60_000);

      it('rejects with the last LockedError (lock_held, naming the holder) once waitMs is over, its callback not called', async () => {
        const { owner } = await ownedSpace();
        const alice = await participant(owner, 'Alice');
        const recorded = recordedLocks();
        const bob = await participant(owner, 'Bob', hub({ fetch: recorded.impl }));
        const doc = await alice.artifacts.create({ name: 'doc', content: 'x' });
        const held = await alice.artifacts.lock(doc.id);
        let called = false;
        const started = Date.now();
        const error = await bob.artifacts
          .withLock(
            doc.id,
            () => {
              called = true;
            },
            { waitMs: 800 },
          )
          .catch((e: unknown) => e);
        const took = Date.now() - started;
        expect(error).toBeInstanceOf(LockedError);
        expect(error).toMatchObject({
          status: 423,
          code: 'lock_held',
          lockedBy: alice.participantId,
          lockedByName: 'Alice',
          lockExpiresAt: held.lockExpiresAt,
        });
        // The server's answer to the last attempt, which came once the wait was over: the attempt
        // made at its end, or (a server slow to answer, on a loaded machine) just before it.
        expect((error as LockedError).requestId).toBeDefined();
        expect(recorded.locks.at(-1)!.answered! - started).toBeGreaterThanOrEqual(790);
        expect(took).toBeGreaterThanOrEqual(800);
        // Plus the last call's answer: not the lock's lifetime (3 s), nor a wait after the last call.
        expect(took).toBeLessThan(2500);
        expect(called).toBe(false);
        expect((await owner.artifacts.get(doc.id)).lockedBy).toBe(alice.participantId);

        // Without waitMs (or 0), one lock call and the LockedError at once, as before.
        const before = recorded.locks.length;
        for (const options of [undefined, { waitMs: 0 }]) {
          await expect(bob.artifacts.withLock(doc.id, () => 'never', options)).rejects.toMatchObject({
            code: 'lock_held',
          });
        }
        expect(recorded.locks.length - before).toBe(2);
      });

      it('ends the wait with an AbortError as soon as the signal aborts, leaving the holder’s lock alone', async () => {
        const { owner } = await ownedSpace();
        const alice = await participant(owner, 'Alice');
        const bob = await participant(owner, 'Bob');
        const doc = await alice.artifacts.create({ name: 'doc', content: 'x' });
        const held = await alice.artifacts.lock(doc.id);
        const controller = new AbortController();
        let abortedAt = 0;
        setTimeout(() => {
          abortedAt = Date.now();
          controller.abort();
        }, 500);
        let called = false;
        const error = await bob.artifacts
          .withLock(
            doc.id,
            () => {
              called = true;
            },
            { waitMs: 10_000, signal: controller.signal },
          )
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(AbortError);
        // At once, or after one call to find out whether a lock call the abort cut off took the lock.
        expect(Date.now() - abortedAt).toBeLessThan(1000);
        expect(called).toBe(false);
        expect(await owner.artifacts.get(doc.id)).toMatchObject({
          lockedBy: alice.participantId,
          lockExpiresAt: held.lockExpiresAt,
        });
        // So does lock(id, { waitMs }).
        const stop = new AbortController();
        setTimeout(() => stop.abort(), 300);
        await expect(
          bob.artifacts.lock(doc.id, { waitMs: 10_000, signal: stop.signal }),
        ).rejects.toBeInstanceOf(AbortError);
      });

      it('waits without end with waitMs: Infinity, until the signal, and logs the wait without a number', async () => {
        const { owner } = await ownedSpace();
        const alice = await participant(owner, 'Alice');
        const said: string[] = [];
        const logger = { debug() {}, info: (line: string) => said.push(line), warn() {}, error() {} };
        const bob = await participant(owner, 'Bob', hub({ logger, logLevel: 'info' }));
        const doc = await alice.artifacts.create({ name: 'doc', content: 'x' });
        await alice.artifacts.lock(doc.id);
        const stop = new AbortController();
        setTimeout(() => stop.abort(), 600);
        await expect(
          bob.artifacts.lock(doc.id, { waitMs: Number.POSITIVE_INFINITY, signal: stop.signal }),
        ).rejects.toBeInstanceOf(AbortError);
        const waiting = said.filter((line) => line.includes(' is locked ('));
        expect(waiting).toEqual([expect.stringMatching(/; waiting for it$/)]);
        expect(waiting[0]).not.toContain('Infinity');
      });

      // LOCK_TTL_S=3 on the shared test server.
      it('takes a lock that lapses while it waits, soon after its lockExpiresAt, and holds it a whole lifetime from then', async () => {
        const { owner } = await ownedSpace();
        const alice = await participant(owner, 'Alice');
        const recorded = recordedLocks();
        const bob = await participant(owner, 'Bob', hub({ fetch: recorded.impl }));
        const doc = await alice.artifacts.create({ name: 'doc', content: 'x' });
        // Taken and never released: its holder went away.
        const held = await alice.artifacts.lock(doc.id);
        const lapses = Date.parse(held.lockExpiresAt);
        const seen = await bob.artifacts.withLock(
          doc.id,
          async (locked) => {
            const took = Date.now();
            // Longer than the time waited is from a lifetime: the lock lives from when it was taken.
            await pause(1500);
            const aborted = locked.signal.aborted;
            const written = await locked.write('bob');
            return { took, aborted, version: written.version };
          },
          { waitMs: 10_000 },
        );
        expect(seen.took).toBeGreaterThanOrEqual(lapses);
        // Its lock call and its read after the lapse, not a pause of up to 2 s past it.
        expect(seen.took - lapses).toBeLessThan(1500);
        expect(seen).toMatchObject({ aborted: false, version: 2 });
        // It never slept past the lapse, and did not hurry before it either.
        expect(recorded.locks.length).toBeLessThanOrEqual(15);
        expect((await owner.artifacts.get(doc.id)).lockedBy).toBeUndefined();
      }, 20_000);

      it('lets agents that wait take turns: 3 agents × 4 writes, no LockedError, no write lost', async () => {
        const { owner } = await ownedSpace();
        const recorded = recordedLocks();
        const names = ['A', 'B', 'C'];
        const agents = await Promise.all(
          names.map((name) => participant(owner, name, hub({ fetch: recorded.impl }))),
        );
        const doc = await owner.artifacts.create({ name: 'doc', content: '' });
        const writes = 4;
        const results = await Promise.allSettled(
          agents.map(async (agent, n) => {
            for (let i = 0; i < writes; i++)
              await agent.artifacts.withLock(
                doc.id,
                async (locked) => {
                  await pause(50); // thinking
                  return locked.write(`${locked.content}${names[n]}${i}\n`);
                },
                { waitMs: 30_000 },
              );
          }),
        );
        expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
        const after = await owner.artifacts.get(doc.id);
        expect(after.version).toBe(1 + names.length * writes);
        expect(after.content.trim().split('\n').sort()).toEqual(
          names.flatMap((name) => Array.from({ length: writes }, (_, i) => `${name}${i}`)).sort(),
        );
        expect(after.lockedBy).toBeUndefined();
        // The lock calls were taken (one per write) or refused while another held it, nothing else.
        expect(recorded.locks.filter((l) => l.status === 200)).toHaveLength(names.length * writes);
        expect(recorded.locks.every((l) => l.status === 200 || l.status === 423)).toBe(true);
      }, 60_000);

      it('waits for a withLock of the same key in this process to end, then takes the lock', async () => {
        const { owner } = await ownedSpace();
        const me = await participant(owner, 'Worker');
        const doc = await me.artifacts.create({ name: 'doc', content: '' });
        const again = hub().space(me.spaceId, me.key, me.participantId);
        let inside = 0;
        let most = 0;
        const task = (
          client: SpaceClient,
          tag: string,
          options?: { waitMs?: number; signal?: AbortSignal },
        ) =>
          client.artifacts.withLock(
            doc.id,
            async (locked) => {
              most = Math.max(most, ++inside);
              await pause(300);
              const written = await locked.write(`${locked.content}${tag}`);
              inside--;
              return written.version;
            },
            options,
          );
        const versions = await Promise.all([
          task(me, 'a', { waitMs: 5000 }),
          task(again, 'b', { waitMs: 5000 }),
          task(me, 'c', { waitMs: 5000 }),
        ]);
        expect(most).toBe(1);
        expect(versions.sort()).toEqual([2, 3, 4]);
        expect([...(await me.artifacts.get(doc.id)).content].sort()).toEqual(['a', 'b', 'c']);

        // A wait shorter than the running one ends with the SDK's own refusal, as without waitMs.
        const first = task(me, 'd');
        const started = Date.now();
        const refused = await task(again, 'e', { waitMs: 100 }).catch((e: unknown) => e);
        expect(Date.now() - started).toBeGreaterThanOrEqual(100);
        expect(refused).toBeInstanceOf(LockedError);
        expect(refused).toMatchObject({
          code: 'lock_held',
          lockedBy: me.participantId,
          requestId: undefined,
        });
        // And the signal ends it.
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 100);
        const aborted = await task(again, 'f', { waitMs: 5000, signal: controller.signal }).catch(
          (e: unknown) => e,
        );
        expect(aborted).toBeInstanceOf(AbortError);
        expect(await first).toBe(5);
        expect(most).toBe(1);
        expect((await me.artifacts.get(doc.id)).lockedBy).toBeUndefined();
      });

      it('lock(id, { waitMs }) waits too, and rejects with the last LockedError when the time is up', async () => {
        const { owner } = await ownedSpace();
        const alice = await participant(owner, 'Alice');
        const bob = await participant(owner, 'Bob');
        const doc = await alice.artifacts.create({ name: 'doc', content: 'x' });
        await alice.artifacts.lock(doc.id);
        // Alice lets go in 0.7 s: her unlock's outcome is taken at once, and checked after the wait.
        const released = pause(700)
          .then(() => alice.artifacts.unlock(doc.id))
          .then(
            () => 'released',
            (error: unknown) => error,
          );
        const { data: lock, response } = await bob.artifacts.lock(doc.id, { waitMs: 5000 }).withResponse();
        expect(await released).toBe('released');
        expect(lock.lockedBy).toBe(bob.participantId);
        expect(response.status).toBe(200);
        const refused = await alice.artifacts.lock(doc.id, { waitMs: 300 }).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(LockedError);
        expect(refused).toMatchObject({
          code: 'lock_held',
          lockedBy: bob.participantId,
          lockedByName: 'Bob',
        });
        await bob.artifacts.unlock(doc.id);
      });

      it('waits for nothing but a lock someone holds: any other error is thrown at once', async () => {
        const { owner } = await ownedSpace();
        const recorded = recordedLocks();
        const me = await participant(owner, 'Muted', hub({ fetch: recorded.impl }));
        const doc = await owner.artifacts.create({ name: 'doc', content: 'x' });
        const started = Date.now();
        await expect(
          me.artifacts.withLock('00000000-0000-4000-8000-000000000000', () => 'never', { waitMs: 10_000 }),
        ).rejects.toBeInstanceOf(NotFoundError);
        await owner.participants.mute(me.participantId);
        await expect(me.artifacts.withLock(doc.id, () => 'never', { waitMs: 10_000 })).rejects.toBeInstanceOf(
          PermissionDeniedError,
        );
        expect(Date.now() - started).toBeLessThan(3000);
        expect(recorded.locks).toHaveLength(2);
      });
    });
  });
});
