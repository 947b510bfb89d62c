import { defineConfig } from 'vitest/config';

/**
 * `pnpm test:faults`: black-box fault scenarios (faults/*.fault.ts) on real server processes and
 * a PostgreSQL server of the suite's own, which they kill, restart and starve. One file at a
 * time: each scenario loads the machine, and the timings they measure must be their own.
 */
export default defineConfig({
  test: {
    name: 'faults',
    include: ['faults/**/*.fault.ts'],
    globalSetup: ['faults/support/global-setup.ts', 'test/helpers/build-server.ts'],
    fileParallelism: false,
    pool: 'forks',
    testTimeout: 300_000,
    hookTimeout: 120_000,
  },
});
