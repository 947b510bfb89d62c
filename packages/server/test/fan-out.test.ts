import { afterEach, describe, expect, it, vi } from 'vitest';
import { FanOut, type HubSubscriber } from '../src/events/fan-out';
import type { HubItem } from '../src/events/frames';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** A fan-out writing `slice` streams a turn, whose context loads call `onLoad`. */
const fanOutOf = (slice: number, onLoad = () => {}): FanOut => {
  const fanOut = new FanOut({
    readEvent: async () => undefined,
    loadContext: async () => {
      onLoad();
      return { participants: [], artifacts: [], suggestedPollingIntervalMs: 2000 };
    },
    onError: () => {},
  });
  fanOut.slice = slice;
  return fanOut;
};

/** What a stream was handed, as the tests compare it: `event 3`, `context 3`. */
const labelOf = (item: HubItem): string =>
  item.type === 'context' ? `context ${item.afterSeq}` : `event ${item.event.seq}`;

describe('FanOut', () => {
  it('pings its streams in slices, yielding to I/O between them', async () => {
    const fanOut = fanOutOf(3);
    let ticks = 0;
    const subscriber = (): HubSubscriber => ({
      deliver: () => {},
      tick: () => void ticks++,
      shutdown: () => {},
    });
    for (let i = 0; i < 4; i++) fanOut.subscribe('a', subscriber());
    for (let i = 0; i < 3; i++) fanOut.subscribe('b', subscriber());

    fanOut.tick();
    expect(ticks).toBe(3);
    await nextTurn();
    expect(ticks).toBe(6);
    await nextTurn();
    expect(ticks).toBe(7);
    await nextTurn();
    expect(ticks).toBe(7);
  });

  it('writes a context event in slices too, after the event that changed the participants', async () => {
    let loaded = 0;
    const fanOut = fanOutOf(3, () => loaded++);
    const received: string[][] = [];
    for (let i = 0; i < 7; i++) {
      const items: string[] = [];
      received.push(items);
      fanOut.subscribe('a', {
        deliver: (item) => void items.push(labelOf(item)),
        tick: () => {},
        shutdown: () => {},
      });
    }
    fanOut.notice({ spaceId: 'a', seq: 1, kind: 'participant-status', data: { participantId: 'p' } });
    const contexts = () => received.filter((items) => items.includes('context 1')).length;
    // Turn by turn (the notice goes out after a 1 ms timer, then the event and the context in
    // slices): never more than one slice of contexts in a turn.
    const perTurn: number[] = [];
    for (let turns = 0; contexts() < 7 && turns < 100_000; turns++) {
      const before = contexts();
      await nextTurn();
      if (contexts() > before) perTurn.push(contexts() - before);
    }
    expect(perTurn).toEqual([3, 3, 1]);
    expect(loaded).toBe(1);
    for (const items of received) expect(items).toEqual(['event 1', 'context 1']);
  });

  it('holds the events heard while a context goes out in slices until every stream has it', async () => {
    // 3,000 streams, 1,000 a turn, each write taking 2 µs: a slice takes 2 ms, longer than the
    // next notice's 1 ms timer.
    const fanOut = fanOutOf(1000);
    const received: string[][] = [];
    const unsubscribe: (() => void)[] = [];
    for (let i = 0; i < 3000; i++) {
      const items: string[] = [];
      received.push(items);
      unsubscribe.push(
        fanOut.subscribe('a', {
          deliver: (item) => {
            const until = performance.now() + 0.002;
            while (performance.now() < until);
            items.push(labelOf(item));
            // Once the first slice of the context is out, the first 2,000 streams close (the
            // next event fits in one slice) and a message is sent.
            if (i === 999 && item.type === 'context') {
              for (const close of unsubscribe.slice(0, 2000)) close();
              fanOut.notice({ spaceId: 'a', seq: 2, kind: 'message', data: { n: 2 } });
            }
          },
          tick: () => {},
          shutdown: () => {},
        }),
      );
    }
    fanOut.notice({ spaceId: 'a', seq: 1, kind: 'participant-status', data: { participantId: 'p' } });
    const last = received[2999]!;
    for (let waited = 0; last.length < 3 && waited < 5000; waited += 5) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    for (const items of received.slice(2000)) expect(items).toEqual(['event 1', 'context 1', 'event 2']);
    for (const items of received.slice(0, 2000)) expect(items).toEqual(['event 1', 'context 1']);
  });

  describe('events this process committed', () => {
    /** A fan-out with one stream on space `a`; what that stream was handed. */
    const oneStream = (onLoad?: () => void) => {
      const fanOut = fanOutOf(256, onLoad);
      const items: string[] = [];
      fanOut.subscribe('a', {
        deliver: (item) => void items.push(labelOf(item)),
        tick: () => {},
        shutdown: () => {},
      });
      return { fanOut, items };
    };
    const message = (seq: number) => ({ spaceId: 'a', seq, kind: 'message' as const, data: { seq } });
    const settled = () => new Promise((resolve) => setTimeout(resolve, 20));

    it('go out without waiting for the bus, once: its notice, coming after, is dropped', async () => {
      const { fanOut, items } = oneStream();
      fanOut.committed(message(1));
      fanOut.committed(message(2));
      await settled();
      expect(items).toEqual(['event 1', 'event 2']);
      fanOut.notice(message(1));
      fanOut.notice(message(2));
      await settled();
      expect(items).toEqual(['event 1', 'event 2']);
    });

    it('are not fanned out again when the bus was quicker', async () => {
      const { fanOut, items } = oneStream();
      fanOut.notice(message(1));
      fanOut.committed(message(1));
      await settled();
      expect(items).toEqual(['event 1']);
      // Nor when a later event of the space was heard first (the streams fill the gap).
      fanOut.notice(message(3));
      fanOut.committed(message(2));
      await settled();
      expect(items).toEqual(['event 1', 'event 3']);
    });

    it("drop the bus's late notice of an earlier message, but never of another event", async () => {
      let loads = 0;
      const { fanOut, items } = oneStream(() => loads++);
      fanOut.committed(message(3));
      await settled();
      // Another node's, committed before: the stream filled it from the database with event 3.
      fanOut.notice(message(2));
      // A participant's change, also before: the context is still refreshed.
      fanOut.notice({ spaceId: 'a', seq: 1, kind: 'participant-status', data: { participantId: 'p' } });
      await settled();
      expect(items).toEqual(['event 3', 'event 1', 'context 1']);
      expect(loads).toBe(1);
      // What comes after is heard as ever.
      fanOut.notice(message(4));
      await settled();
      expect(items.at(-1)).toBe('event 4');
    });

    it('are ignored in a space nobody here listens to', async () => {
      const { fanOut, items } = oneStream();
      fanOut.committed({ ...message(1), spaceId: 'b' });
      await settled();
      expect(items).toEqual([]);
      expect([...fanOut.listened()]).toEqual(['a']);
    });
  });

  describe('wake-ups', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('wakes every stream of a space at the earliest time asked, with one timer per space', () => {
      vi.useFakeTimers();
      const fanOut = fanOutOf(256);
      const woken = { a: 0, b: 0 };
      const subscriber = (space: 'a' | 'b'): HubSubscriber => ({
        deliver: () => {},
        tick: () => {},
        wake: () => void woken[space]++,
        shutdown: () => {},
      });
      for (let i = 0; i < 3; i++) fanOut.subscribe('a', subscriber('a'));
      const unsubscribeB = fanOut.subscribe('b', subscriber('b'));

      // Three streams of a ask for 500, 200 and 900 ms: one timer, at 200.
      fanOut.wakeAt('a', 500);
      fanOut.wakeAt('a', 200);
      fanOut.wakeAt('a', 900);
      fanOut.wakeAt('b', 300);
      expect(vi.getTimerCount()).toBe(2);
      vi.advanceTimersByTime(199);
      expect(woken).toEqual({ a: 0, b: 0 });
      vi.advanceTimersByTime(1);
      expect(woken).toEqual({ a: 3, b: 0 });

      // A space whose last stream goes drops its timer with it.
      unsubscribeB();
      expect(vi.getTimerCount()).toBe(0);
      vi.advanceTimersByTime(1000);
      expect(woken).toEqual({ a: 3, b: 0 });

      // Once woken, the space takes the next request (its streams woken early ask again).
      fanOut.wakeAt('a', 400);
      vi.advanceTimersByTime(400);
      expect(woken).toEqual({ a: 6, b: 0 });

      // Closing the hub drops every timer.
      fanOut.wakeAt('a', 100);
      expect(vi.getTimerCount()).toBe(1);
      fanOut.close();
      expect(vi.getTimerCount()).toBe(0);
    });

    it('wakes a large space in slices', async () => {
      const fanOut = fanOutOf(2);
      let woken = 0;
      let inFirstTurn: number | undefined;
      let firstTurnOver: () => void = () => {};
      const firstWake = new Promise<void>((resolve) => (firstTurnOver = resolve));
      const wake = () => {
        // Read once the timer's turn is over (microtasks run before the next slice's turn).
        if (woken++ === 0)
          queueMicrotask(() => {
            inFirstTurn = woken;
            firstTurnOver();
          });
      };
      for (let i = 0; i < 5; i++)
        fanOut.subscribe('a', { deliver: () => {}, tick: () => {}, wake, shutdown: () => {} });
      fanOut.wakeAt('a', 1);
      await firstWake;
      expect(inFirstTurn).toBe(2);
      await nextTurn();
      expect(woken).toBe(4);
      await nextTurn();
      expect(woken).toBe(5);
    });
  });
});
