import { defineConfig } from 'vitest/config';

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
};

export default defineConfig({
  test: {
    // Four files at a time on CI's two cores: most of this suite waits on the server's clock (lock
    // lifetimes, heartbeats, Retry-After). With three, it used 69 % of the two cores (224 s of CPU
    // in 162 s) and took 161 s; with four, 142 s.
    maxWorkers: 4,
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 180_000 } },
      postgresUrl
        ? { test: { ...server, name: 'postgres', env: { TEST_DATABASE_URL: postgresUrl } } }
        : { test: { ...server, name: 'pglite', env: { TEST_DATABASE_URL: '' } } },
    ],
  },
});
