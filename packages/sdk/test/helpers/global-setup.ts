import type { TestProject } from 'vitest/node';
import { serverBundle, startServer } from './server';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The server every test file of the project shares (LOCK_TTL_S=3, rate limits out of the way, webhooks to loopback). */
    serverUrl: string;
  }
}

/** One server per project (PGlite or PostgreSQL), shared by its test files. */
export default async function setup(project: TestProject) {
  // Started as a bundle rather than through tsx: 4.4 s of CPU a start against 8.2. The server's
  // suite's own bundler, loaded by its path: it is the server package's file, not one of this one.
  const bundler: string = new URL('../../../server/test/helpers/build-server.ts', import.meta.url).href;
  const { buildServer } = (await import(bundler)) as { buildServer(outfile: string): Promise<void> };
  await buildServer(serverBundle);
  // The project's `env` reaches its test workers, not this hook: the project's name says which database.
  const server = await startServer(
    // Webhooks may reach the tests' receivers on loopback.
    { WEBHOOK_ALLOW_NETWORKS: '127.0.0.1' },
    project.name === 'postgres' ? process.env.TEST_DATABASE_URL : undefined,
  );
  project.provide('serverUrl', server.url);
  return () => server.close();
}
