import { describe, expect, it } from 'vitest';
import { FanOut, type HubSubscriber } from '../src/events/fan-out';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('FanOut', () => {
  it('pings its streams in slices, yielding to I/O between them', async () => {
    const fanOut = new FanOut({
      readEvent: async () => undefined,
      loadContext: async () => ({ participants: [], artifacts: [], suggestedPollingIntervalMs: 2000 }),
      onError: () => {},
    });
    fanOut.slice = 3;
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
    const fanOut = new FanOut({
      readEvent: async () => undefined,
      loadContext: async () => {
        loaded++;
        return { participants: [], artifacts: [], suggestedPollingIntervalMs: 2000 };
      },
      onError: () => {},
    });
    fanOut.slice = 3;
    const received: string[][] = [];
    for (let i = 0; i < 7; i++) {
      const items: string[] = [];
      received.push(items);
      fanOut.subscribe('a', {
        deliver: (item) =>
          void items.push(item.type === 'context' ? `context ${item.afterSeq}` : `event ${item.event.seq}`),
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
});
