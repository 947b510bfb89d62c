import { conveneVitestConfig } from '../../vitest.shared';

// The pages in a browser are the same pages on either database, and serve.test.ts starts its
// servers on memory:// whatever the project: once. Every file starts its own servers, so the files
// of a worker share its modules.
export default conveneVitestConfig({
  once: ['test/**/*.browser.test.ts', 'test/serve.test.ts'],
  isolate: false,
});
