import { systemClock } from '@convene/core';
import Fastify from 'fastify';
import { expect, it } from 'vitest';
import { registerPolicySweeper, type Sweepable } from '../src/http/sweeper';

it('sweeps every target on its turn, even when one before it fails', async () => {
  const app = Fastify({ logger: false });
  const failing: Sweepable = {
    sweep: async () => {
      throw new Error('database unreachable');
    },
  };
  const swept: Date[] = [];
  const after: Sweepable = {
    sweep: async (now) => {
      swept.push(now);
      return 0;
    },
  };
  registerPolicySweeper(app, {
    limiter: failing as never,
    store: failing as never,
    clock: systemClock,
    intervalMs: 20,
    also: [failing, after],
  });
  await app.ready();
  try {
    await expect.poll(() => swept.length, { timeout: 2000 }).toBeGreaterThanOrEqual(2);
  } finally {
    await app.close();
  }
});

it('deletes a backlog of expired records in one turn, batch after batch, within its time', async () => {
  const app = Fastify({ logger: false });
  let left = 50_500;
  const turns = new Set<number>();
  const backlog: Sweepable = {
    sweep: async (now, limit) => {
      turns.add(now.getTime());
      const deleted = Math.min(limit, left);
      left -= deleted;
      return deleted;
    },
  };
  const endless: Sweepable = { sweep: async (_now, limit) => limit };
  registerPolicySweeper(app, {
    limiter: endless as never,
    store: backlog as never,
    clock: systemClock,
    intervalMs: 50,
    turnMs: 200,
  });
  await app.ready();
  try {
    // The endless target's turn ends at its time, and the backlog's 51 batches follow in one turn.
    await expect.poll(() => left, { timeout: 5000 }).toBe(0);
    expect(turns.size).toBe(1);
  } finally {
    await app.close();
  }
});
