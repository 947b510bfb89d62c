import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { finished, User } from './helpers/cli';
import { repoRoot } from './helpers/paths';
import { freePort, onPostgres } from './helpers/server';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'convene-serve-'));
  dirs.push(dir);
  return dir;
};
const started: ChildProcess[] = [];
afterAll(() => {
  // A test that failed half-way leaves its server running (pnpm, tsx and the server are a group).
  for (const child of started) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs a command of the repository root the way a developer does, and collects its output. */
function fromRoot(
  command: string,
  args: string[],
  env: Record<string, string>,
): { child: ChildProcess; output: () => string } {
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: { ...process.env, TEST_DATABASE_URL: '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so whatever it starts can be stopped with it.
    detached: true,
  });
  started.push(child);
  let text = '';
  child.stdout!.on('data', (chunk) => {
    text += chunk;
  });
  child.stderr!.on('data', (chunk) => {
    text += chunk;
  });
  return { child, output: () => text };
}

async function until(output: () => string, pattern: RegExp, child: ChildProcess): Promise<RegExpMatchArray> {
  // From source (turbo, then tsx compiling the server) on a machine busy with other tests: minutes.
  const deadline = Date.now() + 150_000;
  for (;;) {
    const match = output().match(pattern);
    if (match) return match;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`no ${pattern} in:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// From source, as the repository runs it (the bundle is what every other test file runs).
describe.runIf(!onPostgres())('pnpm start and pnpm convene', () => {
  it('pnpm start runs `convene serve`: readiness line, PORT and DATA_DIR from the environment, SIGTERM stops it', async () => {
    const port = await freePort();
    const data = tempDir();
    const server = fromRoot('pnpm', ['start'], { PORT: String(port), DATA_DIR: data });
    const [, url] = await until(server.output, /listening on (http:\/\/\S+)/, server.child);
    expect(url).toBe(`http://127.0.0.1:${port}`);
    expect(server.output()).toContain(`embedded PGlite in ${data}`);
    expect((await fetch(`${url}/api/health`)).status).toBe(200);
    const exited = new Promise((resolve) => server.child.once('exit', resolve));
    // The server process holds the data directory's lock (pnpm and tsx run it as a child).
    process.kill(Number(readFileSync(join(data, 'convene.lock'), 'utf8')), 'SIGTERM');
    expect(await exited).toBe(0);
  }, 240_000);

  it('flags override the environment; a second server on the same data refuses; bad flags are usage errors', async () => {
    const port = await freePort();
    const data = tempDir();
    const tsx = join(repoRoot, 'node_modules/.bin/tsx');
    const first = fromRoot(
      tsx,
      ['apps/cli/src/main.ts', 'serve', '--port', String(port), '--data-dir', data, '--log-format', 'text'],
      {
        PORT: '1',
        LOG_FORMAT: 'json',
        LOG_LEVEL: 'info',
      },
    );
    await until(first.output, new RegExp(`listening on http://127.0.0.1:${port}`), first.child);
    // Its log as text for a person, whatever LOG_FORMAT said.
    await fetch(`http://127.0.0.1:${port}/api/health`);
    await until(first.output, / {2}200 {2}GET \/api\/health {2}[\d.]+ ms/, first.child);

    const second = fromRoot(
      tsx,
      ['apps/cli/src/main.ts', 'serve', '--port', String(await freePort()), '--data-dir', data],
      {},
    );
    const secondExit = await new Promise((resolve) => second.child.once('exit', resolve));
    expect(secondExit).toBe(1);
    expect(second.output()).toContain('the server did not start');
    expect(second.output()).toMatch(/in use/);

    const bad = fromRoot(tsx, ['apps/cli/src/main.ts', 'serve', '--port', 'eighty'], {});
    expect(await new Promise((resolve) => bad.child.once('exit', resolve))).toBe(2);
    expect(bad.output()).toContain('--port must be a number');
    const badFormat = fromRoot(tsx, ['apps/cli/src/main.ts', 'serve', '--log-format', 'yaml'], {});
    expect(await new Promise((resolve) => badFormat.child.once('exit', resolve))).toBe(2);
    expect(badFormat.output()).toMatch(/--log-format/);

    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    process.kill(Number(readFileSync(join(data, 'convene.lock'), 'utf8')), 'SIGINT');
    expect(await exited).toBe(0);
  }, 240_000);

  it('pnpm convene runs the CLI from source, in the directory it was typed in', async () => {
    const user = new User(undefined);
    try {
      const here = tempDir();
      const child = spawn(
        'pnpm',
        ['--silent', 'convene', 'artifact', 'create', 'x', '--file', 'missing.md'],
        {
          cwd: repoRoot,
          env: { ...process.env, ...user.env, CONVENE_URL: 'http://127.0.0.1:9', INIT_CWD: here },
          stdio: ['pipe', 'pipe', 'pipe'],
        },
      );
      const result = await finished(child, { timeoutMs: 150_000 });
      // It ran from source as far as the space, checked before the file: none is saved, and no
      // server answers at CONVENE_URL, which is what it reports (exit 1).
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('cannot reach http://127.0.0.1:9');
      const version = spawn('pnpm', ['--silent', 'convene', '--version'], {
        cwd: repoRoot,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      expect((await finished(version, { timeoutMs: 150_000 })).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    } finally {
      user.remove();
    }
  }, 240_000);
});
