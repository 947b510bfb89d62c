import { type Deps, systemClock } from '@convene/core';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { Presence } from '../src/http/presence';

/** Deps whose database records each statement it is asked to run, or fails them all. */
function fakeDeps(fail = false) {
  const statements: unknown[] = [];
  const db = {
    execute: async (statement: unknown) => {
      if (fail) throw new Error('database away');
      statements.push(statement);
      return [];
    },
  };
  return { deps: { db, clock: systemClock } as unknown as Deps, statements };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
});
afterEach(() => {
  vi.useRealTimers();
});

it('writes a held key at once and then every round until its last holder releases it', async () => {
  const { deps, statements } = fakeDeps();
  // Rounds every 4 s.
  const presence = new Presence(deps, 5_000, 4_000);
  presence.hold('k');
  presence.hold('k');
  await vi.advanceTimersByTimeAsync(0);
  expect(statements).toHaveLength(1);
  await vi.advanceTimersByTimeAsync(8_000);
  expect(statements).toHaveLength(3);
  // One holder left: still written.
  presence.release('k');
  await vi.advanceTimersByTimeAsync(4_000);
  expect(statements).toHaveLength(4);
  // The last holder gone: no more rounds.
  presence.release('k');
  await vi.advanceTimersByTimeAsync(20_000);
  expect(statements).toHaveLength(4);
});

it('tells a failed write to its onError and tries again the next round', async () => {
  const { deps } = fakeDeps(true);
  const failures: string[] = [];
  const presence = new Presence(deps, 5_000, 4_000, (error) => failures.push((error as Error).message));
  presence.hold('k');
  await vi.advanceTimersByTimeAsync(4_000);
  presence.release('k');
  expect(failures).toEqual(['database away', 'database away']);
});
