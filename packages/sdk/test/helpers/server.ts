// Real Convene servers for the SDK's tests: the server's entry point (bundled once for the run) as
// a child process, as a user runs it (`pnpm start`), on PGlite or on a fresh PostgreSQL database.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv, createPostgresTestDatabase } from '@convene/core/testing';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../../../..');
const serverRoot = join(repoRoot, 'packages/server');
/** The server's entry point bundled for the run (global-setup.ts), as the server's own suite starts it. */
const serverBundle = join(repoRoot, 'packages/sdk/.test-build/server.mjs');

/**
 * Bundles the server for the run: started as a bundle rather than through tsx, 4.4 s of CPU a start
 * against 8.2. The server suite's own bundler, loaded by its path: a file of the server package,
 * not of this one.
 */
export async function buildServerBundle(): Promise<void> {
  const bundler: string = new URL('../../../server/test/helpers/build-server.ts', import.meta.url).href;
  const { buildServer } = (await import(bundler)) as { buildServer(outfile: string): Promise<void> };
  await buildServer(serverBundle);
}

/** The PostgreSQL server of this run (TEST_DATABASE_URL), or undefined on PGlite. */
export const postgresUrl = (): string | undefined => process.env.TEST_DATABASE_URL || undefined;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A database for one server: a PGlite data directory, or a fresh PostgreSQL database. */
export interface TestDatabase {
  env: Record<string, string>;
  drop(): Promise<void>;
}

export async function createDatabase(serverUrl = postgresUrl()): Promise<TestDatabase> {
  if (!serverUrl) {
    const dir = mkdtempSync(join(tmpdir(), 'convene-sdk-'));
    return { env: { DATA_DIR: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const pg = await createPostgresTestDatabase(serverUrl);
  return { env: { DATABASE_URL: pg.url }, drop: () => pg.drop() };
}

export interface RunningServer {
  url: string;
  port: number;
  /** Everything the current process printed. */
  output(): string;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
  /** Stops it and starts it again on the same port and data. */
  restart(): Promise<void>;
  /** Stops it and drops its database. */
  close(): Promise<void>;
}

/**
 * Starts a server on its own database (on the PostgreSQL server `postgresServer`, else PGlite);
 * resolves once it prints `listening on`.
 */
export async function startServer(
  env: Record<string, string> = {},
  postgresServer = postgresUrl(),
): Promise<RunningServer> {
  // The server projects' global setup builds it before any file runs; a run of the unit project
  // alone (test/unit/package.test.ts) has none, and builds it here when no earlier run left one.
  if (!existsSync(serverBundle)) await buildServerBundle();
  const database = await createDatabase(postgresServer);
  const port = await freePort();
  const fullEnv = childEnv({
    LOG_LEVEL: 'warn',
    TEST_DATABASE_URL: '',
    PORT: String(port),
    HOST: '127.0.0.1',
    SECRET: 'sdk-test-secret-0123456789',
    RATE_LIMIT_MAX: '1000000',
    LOCK_TTL_S: '3',
    ...database.env,
    ...env,
  });
  let child: ChildProcess;
  let text = '';
  const launch = () =>
    new Promise<void>((resolve, reject) => {
      text = '';
      child = spawn(process.execPath, [serverBundle], {
        cwd: serverRoot,
        env: fullEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const onData = (chunk: Buffer) => {
        text += chunk.toString();
        if (/listening on http/.test(text)) resolve();
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('exit', (code) =>
        reject(new Error(`server exited with ${code} before listening:\n${text}`)),
      );
    });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  await launch();
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    output: () => text,
    stop,
    async restart() {
      await stop();
      await launch();
    },
    async close() {
      await stop();
      await database.drop();
    },
  };
}
