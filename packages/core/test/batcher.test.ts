import { describe, expect, it } from 'vitest';
import { Batcher } from '../src/db/batcher';

/** A run that records each batch and answers after the current tick, as a database call would. */
function recorder<T>(answer: (items: T[]) => unknown[] | Error = (items) => items.map((i) => `r${i}`)) {
  const batches: T[][] = [];
  const run = async (items: T[]) => {
    batches.push(items);
    await new Promise((resolve) => setImmediate(resolve));
    const result = answer(items);
    if (result instanceof Error) throw result;
    return result;
  };
  return { batches, run };
}

describe('Batcher', () => {
  it('runs the first items alone, then everything that queued meanwhile as one batch', async () => {
    const { batches, run } = recorder<number>();
    const batcher = new Batcher(run, 2);
    const results = await Promise.all([1, 2, 3, 4, 5].map((i) => batcher.push(i)));
    expect(results).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
    expect(batches).toEqual([[1], [2], [3, 4, 5]]);
  });

  it('keeps at most maxInFlight batches running', async () => {
    let running = 0;
    let most = 0;
    const batcher = new Batcher(async (items: number[]) => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running -= 1;
      return items;
    }, 1);
    const pushes: Promise<number>[] = [];
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 3; i++) pushes.push(batcher.push(round * 3 + i));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(await Promise.all(pushes)).toEqual(Array.from({ length: 15 }, (_, i) => i));
    expect(most).toBe(1);
  });

  it('overlaps the batches in flight only once they have been out overlapAfterMs', async () => {
    const releases: (() => void)[] = [];
    const batches: number[][] = [];
    const batcher = new Batcher(
      (items: number[]) => {
        batches.push(items);
        return new Promise<number[]>((resolve) => releases.push(() => resolve(items)));
      },
      2,
      { overlapAfterMs: 150 },
    );
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const first = batcher.push(1);
    await sleep(5);
    const queued = [batcher.push(2), batcher.push(3)];
    await sleep(5);
    // The first is out, and not for long: the others wait for it, together.
    expect(batches).toEqual([[1]]);
    await sleep(200);
    // Out past 150 ms, it is stalled: the queue goes out beside it, as one batch.
    expect(batches).toEqual([[1], [2, 3]]);
    const last = batcher.push(4);
    await sleep(5);
    expect(batches).toHaveLength(2); // two in flight: no more
    releases[1]!();
    expect(await Promise.all(queued)).toEqual([2, 3]);
    // The one still in flight has long stalled: the next goes out at once.
    await sleep(5);
    expect(batches).toEqual([[1], [2, 3], [4]]);
    releases[0]!();
    releases[2]!();
    expect(await first).toBe(1);
    expect(await last).toBe(4);
  });

  it('sends the next batch before the callers of the one that came back resume', async () => {
    const releases: (() => void)[] = [];
    const batches: number[][] = [];
    const batcher = new Batcher((items: number[]) => {
      batches.push(items);
      return new Promise<number[]>((resolve) => releases.push(() => resolve(items)));
    }, 1);
    const first = batcher.push(1);
    const queued = [batcher.push(2), batcher.push(3)];
    expect(batches).toEqual([[1]]);
    releases[0]!();
    // The first caller's next step already finds the queue on its way to the database.
    await first;
    expect(batches).toEqual([[1], [2, 3]]);
    releases[1]!();
    expect(await Promise.all(queued)).toEqual([2, 3]);
  });

  it('fails every item of a failed batch, and only those', async () => {
    const { batches, run } = recorder<number>((items) =>
      items.includes(2) ? new Error('statement failed') : items.map((i) => i * 10),
    );
    const batcher = new Batcher(run, 1);
    const settled = await Promise.allSettled([1, 2, 3, 4].map((i) => batcher.push(i)));
    expect(batches).toEqual([[1], [2, 3, 4]]);
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).toEqual([
      10,
      'statement failed',
      'statement failed',
      'statement failed',
    ]);
    expect(await batcher.push(5)).toBe(50);
  });

  it('with sameTurn, sends what one turn of the event loop pushed as one batch, at its end', async () => {
    // A run that blocks, as PGlite's statements do: nothing else of the process runs meanwhile.
    const batches: number[][] = [];
    const record = (into: number[][]) => async (items: number[]) => {
      into.push(items);
      return items;
    };
    const batcher = new Batcher(record(batches), 1, { sameTurn: true });
    const first = [batcher.push(1), batcher.push(2), batcher.push(3)];
    // Nothing goes out during the turn: the pushes of the turn may still come.
    await Promise.resolve();
    expect(batches).toEqual([]);
    expect(await Promise.all(first)).toEqual([1, 2, 3]);
    expect(batches).toEqual([[1, 2, 3]]);
    // A later turn's pushes go out in a batch of their own.
    const next = await new Promise<Promise<number>[]>((resolve) =>
      setImmediate(() => resolve([batcher.push(4), batcher.push(5)])),
    );
    expect(await Promise.all(next)).toEqual([4, 5]);
    expect(batches).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    // Without it, the first push of a turn goes out alone at once.
    const eager: number[][] = [];
    const now = new Batcher(record(eager), 1);
    await Promise.all([now.push(1), now.push(2), now.push(3)]);
    expect(eager).toEqual([[1], [2, 3]]);
  });

  it('refuses a batch answered with the wrong number of results', async () => {
    const batcher = new Batcher(async (items: number[]) => items.slice(1), 1);
    await expect(batcher.push(1)).rejects.toThrow(/a batch of 1 answered 0 results/);
  });
});
