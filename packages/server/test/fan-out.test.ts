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
});
