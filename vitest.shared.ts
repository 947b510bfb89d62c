import { defineConfig } from 'vitest/config';

/**
 * Every suite runs on PGlite, and again on PostgreSQL when TEST_DATABASE_URL is set: two
 * projects over the same files, the first with the variable cleared.
 */
export function conveneVitestConfig({ include = ['test/**/*.test.ts'] }: { include?: string[] } = {}) {
  const postgresUrl = process.env.TEST_DATABASE_URL;
  const base = {
    include,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks' as const,
    // expect.poll waits for a condition; on a loaded machine (CI, two workers beside real server
    // processes and a browser) one second is not enough for a page to catch up.
    expect: { poll: { timeout: 10_000 } },
  };
  return defineConfig({
    test: {
      maxWorkers: 2,
      projects: [
        { test: { ...base, name: 'pglite', env: { TEST_DATABASE_URL: '' } } },
        ...(postgresUrl
          ? [{ test: { ...base, name: 'postgres', env: { TEST_DATABASE_URL: postgresUrl } } }]
          : []),
      ],
    },
  });
}
