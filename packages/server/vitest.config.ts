import { conveneVitestConfig } from '../../vitest.shared';

/**
 * What runs on one database only (see `once`): files whose subject does not depend on the engine.
 * The pages in a browser are the same pages on either database; serve.test.ts starts its servers
 * on memory:// whatever the project; the rest test the HTTP surface and the documents the server
 * serves (headers, errors, input validation, CORS, pipelining, logs, configuration), which answer
 * before, or whatever, the store. Every file starts its own servers, so the files of a worker share
 * its modules.
 */
const ENGINE_INDEPENDENT = [
  'browser.test.ts',
  'serve.test.ts',
  'agent-card.test.ts',
  'cors.test.ts',
  'declarations.test.ts',
  'discovery.test.ts',
  'env.test.ts',
  'errors.test.ts',
  'llms.test.ts',
  'log-format.test.ts',
  'openapi.test.ts',
  'pipelining.test.ts',
  'request-id.test.ts',
  'security-http.test.ts',
  'security-input.test.ts',
  'start-warnings.test.ts',
  'versioning.test.ts',
  'web.test.ts',
];

const config = conveneVitestConfig({
  once: ENGINE_INDEPENDENT.map((name) => `test/**/*${name}`),
  isolate: false,
});
// The tests that start the server as a process start it bundled once for the run.
config.test = { ...config.test, globalSetup: ['test/helpers/build-server.ts'] };

export default config;
