import { createServer as createNetServer } from 'node:net';
import type { Clock } from '@convene/core';
import { createPostgresTestDatabase, leasedPglite, testDatabaseServerUrl } from '@convene/core/testing';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type ServerConfig } from '../../src/env';
import { type ConveneServer, type CreateServerOptions, createServer } from '../../src/server';

export interface TestServer {
  /** The server's PUBLIC_URL (the base of every URL it hands out). */
  url: string;
  /** Where this node listens: its `url` unless the test gave it another node's PUBLIC_URL. */
  listenUrl: string;
  server: ConveneServer;
  /** The PostgreSQL URL a second node would share (undefined on PGlite). */
  databaseUrl: string | undefined;
  close(): Promise<void>;
}

export interface StartOptions {
  /**
   * Test-only routes, registered before the server listens (Fastify takes no routes after
   * that): they pass through the same policy hooks as every route.
   */
  routes?: (app: FastifyInstance, server: ConveneServer) => void;
  config?: Partial<ServerConfig>;
  clock?: Clock;
  /** Join an existing PostgreSQL database (a second node) instead of creating one. */
  databaseUrl?: string;
  /** Capture the server's log lines (at `config.logLevel`, which defaults to silent) here. */
  logStream?: { write(line: string): void };
  /** Stores of the HTTP policies in place of the server's own (see createServer). */
  policies?: CreateServerOptions['policies'];
  /** The event bus in place of the server's own (given it, to wrap it). */
  events?: CreateServerOptions['events'];
  /** How webhook URLs' hosts are looked up at registration. */
  lookupHost?: CreateServerOptions['lookupHost'];
}

/** Whether multi-node tests can run: they need a shared PostgreSQL. */
export const onPostgres = (): boolean => Boolean(testDatabaseServerUrl());

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createNetServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A real server on a loopback port: PGlite cloned from a migrated dump, or a fresh database on
 * TEST_DATABASE_URL (dropped when the last node using it closes). Rate limits are raised unless
 * the test sets them, so suites do not trip over each other.
 */
export async function startTestServer(options: StartOptions = {}): Promise<TestServer> {
  const port = await freePort();
  const serverUrl = testDatabaseServerUrl();
  let drop: (() => Promise<void>) | undefined;
  let databaseUrl = options.databaseUrl;
  if (!databaseUrl && serverUrl) {
    const pg = await createPostgresTestDatabase(serverUrl);
    databaseUrl = pg.url;
    drop = pg.drop;
  }
  const config: ServerConfig = {
    ...loadConfig({}),
    port,
    host: '127.0.0.1',
    publicUrl: `http://127.0.0.1:${port}`,
    databaseUrl: databaseUrl ?? 'memory://',
    rateLimitMax: 100_000,
    secret: 'test-secret-0123456789abcdef',
    logLevel: 'silent',
    ...options.config,
  };
  const server = await createServer(config, {
    logger: Boolean(options.logStream),
    ...(options.logStream ? { logStream: options.logStream } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.policies ? { policies: options.policies } : {}),
    ...(options.events ? { events: options.events } : {}),
    ...(options.lookupHost ? { lookupHost: options.lookupHost } : {}),
    ...(config.databaseUrl === 'memory://' ? { database: await leasedPglite() } : {}),
  });
  options.routes?.(server.app, server);
  await server.app.listen({ port, host: '127.0.0.1' });
  return {
    url: config.publicUrl,
    listenUrl: `http://127.0.0.1:${port}`,
    server,
    databaseUrl,
    async close() {
      await server.close();
      await drop?.();
    },
  };
}
