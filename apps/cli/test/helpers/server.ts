import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childEnv, createPostgresTestDatabase } from '@convene/core/testing';
import { afterAll, beforeAll } from 'vitest';
import { User } from './cli';
import { bundle } from './paths';

export const onPostgres = (): boolean => Boolean(process.env.TEST_DATABASE_URL);

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface TestServer {
  url: string;
  /** Stops the process (SIGTERM) and waits for it. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Starts it again if it was stopped: for a file whose test stopped it and failed before `start`. */
  ensureStarted(): Promise<void>;
  /** Stops it for good and removes its data. */
  close(): Promise<void>;
  output(): string;
}

/**
 * A real server, started the way a user starts it (`convene serve`), as a child process on a free
 * port: embedded PGlite in a temporary directory, or a fresh database on TEST_DATABASE_URL.
 */
export async function startServer(env: Record<string, string> = {}): Promise<TestServer> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'convene-cli-data-'));
  const pg = onPostgres() ? await createPostgresTestDatabase(process.env.TEST_DATABASE_URL!) : undefined;
  const args = [
    'serve',
    '--port',
    String(port),
    ...(pg ? ['--database-url', pg.url] : ['--data-dir', dataDir]),
  ];
  let child: ChildProcess | undefined;
  let text = '';
  const start = () =>
    new Promise<void>((resolve, reject) => {
      const process_ = spawn(process.execPath, [bundle, ...args], {
        env: childEnv({
          TEST_DATABASE_URL: '',
          PUBLIC_URL: url,
          LOG_LEVEL: 'warn',
          RATE_LIMIT_MAX: '100000',
          ...env,
        }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child = process_;
      const onData = (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes(`listening on ${url}`)) resolve();
      };
      process_.stdout?.on('data', onData);
      process_.stderr?.on('data', onData);
      process_.once('exit', (code) =>
        reject(new Error(`server exited with ${code} before listening:\n${text}`)),
      );
    });
  const stop = async () => {
    const running = child;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    await exited;
  };
  await start();
  return {
    url,
    stop,
    start: async () => {
      text = '';
      await start();
    },
    async ensureStarted() {
      if (child && child.exitCode === null && child.signalCode === null) return;
      text = '';
      await start();
    },
    async close() {
      await stop();
      await pg?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
    output: () => text,
  };
}

/**
 * One server for a test file (started before its tests, closed after them) and the people who
 * use it, whose homes are removed at the end.
 */
export function serverForFile(env: Record<string, string> = {}) {
  let server: TestServer | undefined;
  const users: User[] = [];
  beforeAll(async () => {
    server = await startServer(env);
  });
  afterAll(async () => {
    await server?.close();
    for (const u of users) u.remove();
  });
  return {
    get server(): TestServer {
      return server!;
    },
    /** Someone at a terminal with CONVENE_URL set to this server (`url: undefined`: none). */
    user(options: { url?: string | undefined; env?: Record<string, string> } = {}): User {
      const u = new User('url' in options ? options.url : server!.url, options.env);
      users.push(u);
      return u;
    },
  };
}
