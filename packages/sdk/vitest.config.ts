import { defineConfig } from 'vitest/config';
import { slowFirst } from '../../vitest.shared';

/**
 * `unit`: what needs no server (generated code, bundle size, the package checks). Then the tests
 * against a real server, once: on PostgreSQL when TEST_DATABASE_URL is set, else on PGlite. The
 * SDK meets the database only through the server, whose own suite runs on both.
 */
const postgresUrl = process.env.TEST_DATABASE_URL;
const server = {
  include: ['test/*.test.ts'],
  globalSetup: ['test/helpers/global-setup.ts'],
  testTimeout: 60_000,
  hookTimeout: 120_000,
  pool: 'forks' as const,
  // Every file talks to the one server of the project: the files of a worker share its modules.
  isolate: false,
};

export default defineConfig({
  test: {
    // Four files at a time on CI's two cores: most of this suite waits on the server's clock (lock
    // lifetimes, heartbeats, Retry-After). With three, it used 69 % of the two cores (224 s of CPU
    // in 162 s) and took 161 s; with four, 142 s.
    maxWorkers: 4,
    // The longest first (their times in CI), so that none is left to run alone at the end: the lock
    // lifetimes lock-recovery.test.ts waits out took 90 s, and started last it ran alone.
    sequence: {
      sequencer: slowFirst([
        'test/lock-recovery.test.ts',
        'test/artifacts.test.ts',
        'test/unit/package.test.ts',
        'test/readme.test.ts',
        'test/stream.test.ts',
        'test/retries.test.ts',
      ]),
    },
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 180_000 } },
      postgresUrl
        ? { test: { ...server, name: 'postgres', env: { TEST_DATABASE_URL: postgresUrl } } }
        : { test: { ...server, name: 'pglite', env: { TEST_DATABASE_URL: '' } } },
    ],
  },
});
