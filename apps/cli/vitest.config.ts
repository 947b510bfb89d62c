import { conveneVitestConfig } from '../../vitest.shared';

const config = conveneVitestConfig();
// The CLI is tested as it ships: bundled once for the whole run, then run as child processes.
config.test = { ...config.test, globalSetup: ['test/helpers/build.ts'] };

export default config;
