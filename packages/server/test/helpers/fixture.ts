import { afterAll, beforeAll } from 'vitest';
import { Harness } from './factories';
import { type StartOptions, startTestServer, type TestServer } from './harness';
import { Sdk } from './sdk';

export interface ServerFixture {
  /** The running server; its fields may be read once the file's (or describe's) hooks have run. */
  srv: TestServer;
  /** Factories and a raw HTTP client bound to where `srv` listens. */
  h: Harness;
  /** The SDK's clients and factories bound to the same place, for tests of behaviour. */
  sdk: Sdk;
}

/**
 * One server for the enclosing file or `describe`, on PGlite or on TEST_DATABASE_URL: started in
 * `beforeAll`, closed in `afterAll`. Options may be a function, read when the server starts, so a
 * second node can take the first one's `databaseUrl`, or a test its issuer's address.
 *
 *   const { srv, h, sdk } = useServer({ clock });
 */
export function useServer(options: StartOptions | (() => StartOptions) = {}): ServerFixture {
  let started: TestServer | undefined;
  const running = (): TestServer => {
    if (!started) throw new Error('useServer: the server is read before its beforeAll has run');
    return started;
  };
  const srv: TestServer = {
    get url() {
      return running().url;
    },
    get listenUrl() {
      return running().listenUrl;
    },
    get server() {
      return running().server;
    },
    get databaseUrl() {
      return running().databaseUrl;
    },
    async close() {
      const closing = started;
      started = undefined;
      await closing?.close();
    },
  };
  beforeAll(async () => {
    started = await startTestServer(typeof options === 'function' ? options() : options);
  });
  afterAll(() => srv.close());
  return { srv, h: new Harness(() => srv.listenUrl), sdk: new Sdk(() => srv.listenUrl) };
}

/** A server for one test: started, handed to `body`, and closed whatever `body` does. */
export async function withServer<T>(
  options: StartOptions,
  body: (fixture: ServerFixture) => Promise<T>,
): Promise<T> {
  const srv = await startTestServer(options);
  try {
    return await body({ srv, h: new Harness(srv.listenUrl), sdk: new Sdk(() => srv.listenUrl) });
  } finally {
    await srv.close();
  }
}
