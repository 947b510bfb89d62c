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
