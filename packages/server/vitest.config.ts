import { conveneVitestConfig } from '../../vitest.shared';

// The pages in a browser are the same pages on either database: once.
export default conveneVitestConfig({ once: ['test/**/*.browser.test.ts'] });
