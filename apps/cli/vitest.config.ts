import { conveneVitestConfig } from '../../vitest.shared';

// The CLI meets the database only through the server, whose own suite runs on both: once.
const config = conveneVitestConfig({
  once: true,
  // The longest first (CI's times), so that no long file is left to run alone at the end.
  slow: [
    'test/spaces.test.ts',
    'test/artifacts.test.ts',
    'test/tail.test.ts',
    'test/package.test.ts',
    'test/account.test.ts',
    'test/messages.test.ts',
    'test/tools.test.ts',
    'test/serve.test.ts',
    'test/edit-heartbeat.test.ts',
    'test/interrupt.test.ts',
    'test/inbox.test.ts',
  ],
});
// The CLI is tested as it ships: bundled once for the whole run, then run as child processes.
config.test = { ...config.test, globalSetup: ['test/helpers/build.ts'] };
// Every test starts processes (a server per file, `convene` per command): on a loaded machine
// that takes seconds, so the limits are wider than the other packages'.
for (const project of config.test.projects as { test: Record<string, unknown> }[]) {
  project.test.testTimeout = 120_000;
  project.test.hookTimeout = 180_000;
}

export default config;
