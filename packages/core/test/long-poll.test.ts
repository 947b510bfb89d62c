import { afterEach, describe, expect, it, vi } from 'vitest';
import { UnavailableError } from '../src/errors';
import { longPoll } from '../src/events/long-poll';
import type { StreamEvent } from '../src/events/read-events';
import type { SpaceWatch } from '../src/events/space-watch';

/** A SpaceWatch a test drives by hand: `emit` is a commit heard on the space. */
function fakeWatch() {
  const listeners = new Set<(event: StreamEvent) => void>();
  const watch: SpaceWatch = {
    async watch(_spaceId, onEvent) {
      listeners.add(onEvent);
      return () => listeners.delete(onEvent);
    },
  };
  const emit = (event: StreamEvent) => {
    for (const listener of listeners) listener(event);
  };
  return { watch, emit, listening: () => listeners.size };
}

const message = (seq: number): StreamEvent => ({ seq, kind: 'message', data: {} });
const statusEvent = (seq: number): StreamEvent => ({ seq, kind: 'participant-status', data: {} });
const waitUntil = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
};

describe('longPoll', () => {
  it('reads the database only when an event says so, never on a timer', async () => {
    const { watch, emit, listening } = fakeWatch();
    let reads = 0;
    let stored: number[] = [];
    const polling = longPoll({
      watch,
      spaceId: 's',
      waitSeconds: 10,
      read: async () => {
        reads += 1;
        return [...stored];
      },
      hasNews: (result) => result.length > 0,
      wakesOn: (event) => event.kind === 'message',
    });
    await waitUntil(() => listening() === 1 && reads === 2);
    // Idle for a while: an idle wait costs its subscription and nothing else.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(reads).toBe(2);
    // An event that cannot change the answer is not read for.
    emit(statusEvent(1));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(reads).toBe(2);
    stored = [2];
    emit(message(2));
    expect(await polling).toEqual([2]);
    expect(reads).toBe(3);
    // Answered: the subscription is gone.
    expect(listening()).toBe(0);
  });

  it('answers at once, without subscribing, when the first read has news', async () => {
    const { watch, listening } = fakeWatch();
    let reads = 0;
    const result = await longPoll({
      watch,
      spaceId: 's',
      waitSeconds: 10,
      read: async () => {
        reads += 1;
        return [1];
      },
      hasNews: (r) => r.length > 0,
      wakesOn: () => true,
    });
    expect(result).toEqual([1]);
    expect(reads).toBe(1);
    expect(listening()).toBe(0);
  });

  it('catches a commit between the first read and the subscription with the second read', async () => {
    const { watch } = fakeWatch();
    let reads = 0;
    const result = await longPoll({
      watch,
      spaceId: 's',
      waitSeconds: 10,
      // The message commits right after the first read, before anyone listens.
      read: async () => (++reads === 1 ? [] : [7]),
      hasNews: (r) => r.length > 0,
      wakesOn: () => true,
    });
    expect(result).toEqual([7]);
    expect(reads).toBe(2);
  });

  it('answers the last read when the time is up, and 503 (UnavailableError) when its signal aborts the wait', async () => {
    const { watch, listening } = fakeWatch();
    const started = Date.now();
    const empty = await longPoll({
      watch,
      spaceId: 's',
      waitSeconds: 0.2,
      read: async () => [] as number[],
      hasNews: (r) => r.length > 0,
      wakesOn: () => true,
    });
    expect(empty).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(listening()).toBe(0);

    const controller = new AbortController();
    const aborted = longPoll({
      watch,
      spaceId: 's',
      waitSeconds: 60,
      signal: controller.signal,
      read: async () => [] as number[],
      hasNews: (r) => r.length > 0,
      wakesOn: () => true,
    });
    await waitUntil(() => listening() === 1);
    controller.abort();
    // Cut off (the server shutting down), the wait does not answer that nothing came.
    await expect(aborted).rejects.toBeInstanceOf(UnavailableError);
    await expect(aborted).rejects.toMatchObject({ code: 'shutting_down' });
    expect(listening()).toBe(0);
  });

  it("with cutOff 'last-read', answers the last read when its signal aborts the wait (a caller that wrote first)", async () => {
    const { watch, listening } = fakeWatch();
    const controller = new AbortController();
    let reads = 0;
    const aborted = longPoll({
      watch,
      spaceId: 's',
      waitSeconds: 60,
      signal: controller.signal,
      cutOff: 'last-read',
      read: async () => {
        reads += 1;
        return [] as number[];
      },
      hasNews: (r) => r.length > 0,
      wakesOn: () => true,
    });
    await waitUntil(() => listening() === 1 && reads === 2);
    const started = Date.now();
    controller.abort();
    expect(await aborted).toEqual([]);
    expect(Date.now() - started).toBeLessThan(1_000);
    // Nothing read again: the answer is what the wait had.
    expect(reads).toBe(2);
    expect(listening()).toBe(0);
  });

  describe("at its space's expiry", () => {
    afterEach(() => {
      vi.restoreAllMocks();
    });

    // A clock that ticks a millisecond at every reading: what a busy machine's clock may do
    // between two readings of the same turn. Read twice per turn, a wait that woke just before
    // the expiry found it past at its second reading and answered "nothing new" (200) where the
    // read at the expiry answers 401. Two expiries, so that a turn lands on either parity.
    it.each([5, 6])('reads again, however the clock ticks (the space ends %i ms on)', async (endsIn) => {
      let now = 1_000_000;
      vi.spyOn(Date, 'now').mockImplementation(() => now++);
      const end = now + endsIn;
      const { watch } = fakeWatch();
      let reads = 0;
      const polling = longPoll({
        watch,
        spaceId: 's',
        waitSeconds: 60,
        read: async () => {
          reads += 1;
          // The read's own clock, not a reading that ticks.
          if (now >= end) throw new Error('space expired');
          return [] as number[];
        },
        msToExpiry: () => end - now,
        hasNews: (r) => r.length > 0,
        wakesOn: () => true,
      });
      await expect(polling).rejects.toThrow('space expired');
      expect(reads).toBe(3);
    });
  });
});
