import type { TestProject } from 'vitest/node';
import { buildServerBundle, startServer } from './server';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The server every test file of the project shares (LOCK_TTL_S=3, rate limits out of the way, webhooks to loopback). */
    serverUrl: string;
  }
}

/** One server per project (PGlite or PostgreSQL), shared by its test files. */
export default async function setup(project: TestProject) {
  await buildServerBundle();
  // The project's `env` reaches its test workers, not this hook: the project's name says which database.
  const server = await startServer(
    // Webhooks may reach the tests' receivers on loopback.
    { WEBHOOK_ALLOW_NETWORKS: '127.0.0.1' },
    project.name === 'postgres' ? process.env.TEST_DATABASE_URL : undefined,
  );
  project.provide('serverUrl', server.url);
  return () => server.close();
}
