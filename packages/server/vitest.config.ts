import { conveneVitestConfig } from '../../vitest.shared';

// The pages in a browser are the same pages on either database: once. Every file starts its own
// servers, so the files of a worker share its modules.
export default conveneVitestConfig({ once: ['test/**/*.browser.test.ts'], isolate: false });
