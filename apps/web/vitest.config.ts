import { defineConfig } from 'vitest/config';

// The pages' own tests need no database: the ones that drive the pages in a browser run against a
// real server in packages/server/test (web.test.ts, web.browser.test.ts).
export default defineConfig({
  test: { include: ['test/**/*.test.ts'], testTimeout: 30_000 },
});
