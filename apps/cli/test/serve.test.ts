import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childEnv } from '@convene/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, type Followed, finished, User, watch } from './helpers/cli';
import { bundle, repoRoot } from './helpers/paths';
import { freePort } from './helpers/server';
import { Terminal } from './helpers/tmux';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'convene-serve-'));
  dirs.push(dir);
  return dir;
};
const started: ChildProcess[] = [];
afterAll(() => {
  // A test that failed half-way leaves its server running (pnpm and the server are a group), even
  // when pnpm itself has exited.
  for (const child of started) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs a command of the repository root the way a developer does, and follows what it prints. */
function fromRoot(command: string, args: string[], env: Record<string, string>): Followed {
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: childEnv({ TEST_DATABASE_URL: '', LOG_LEVEL: 'warn', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so whatever it starts can be stopped with it.
    detached: true,
  });
  started.push(child);
  return watch(child, { timeoutMs: 240_000 });
}

/** What it printed, once `pattern` shows: from source (turbo, then tsx compiling the server) on a busy machine, minutes. */
const until = (process_: Followed, pattern: RegExp) =>
  process_.waitFor(pattern, { in: 'output', timeoutMs: 150_000 });

/**
 * SIGTERM to pnpm, as a supervisor or `kill $!` sends it, stops the server (the process holding the
 * data directory's lock) cleanly within 15 s. pnpm passes the signal to its script, which must be
 * the server itself: a shell or tsx's CLI between them left the server running, or killed it
 * outright when it was slow to acknowledge the signal.
 */
async function expectStoppedThroughPnpm(server: Followed, data: string) {
  const { pid } = JSON.parse(readFileSync(join(data, 'convene.lock'), 'utf8'));
  const exited = new Promise((resolve) => server.child.once('close', resolve));
  const stopped = Date.now();
  process.kill(server.child.pid!, 'SIGTERM');
  expect(await exited).toBe(0);
  expect(Date.now() - stopped).toBeLessThan(15_000);
  expect(server.output()).toContain('SIGTERM received: shutting down');
  expect(existsSync(join(data, 'convene.lock'))).toBe(false);
  expect(() => process.kill(pid, 0)).toThrow();
}

// From source, as the repository runs it (the bundle is what every other test file runs).
describe('pnpm start and pnpm convene', () => {
  it('pnpm start runs `convene serve`: readiness line, PORT and DATA_DIR from the environment, SIGTERM stops it', async () => {
    const port = await freePort();
    const data = tempDir();
    const server = fromRoot('pnpm', ['start'], { PORT: String(port), DATA_DIR: data });
    const [, url] = await until(server, /listening on (http:\/\/\S+)/);
    expect(url).toBe(`http://127.0.0.1:${port}`);
    expect(server.output()).toContain(`embedded PGlite in ${data}`);
    expect((await fetch(`${url}/api/health`)).status).toBe(200);
    await expectStoppedThroughPnpm(server, data);
  }, 240_000);

  it('pnpm convene serve stops on a SIGTERM sent to pnpm', async () => {
    const data = tempDir();
    const server = fromRoot(
      'pnpm',
      ['convene', 'serve', '--port', String(await freePort()), '--data-dir', data],
      {},
    );
    await until(server, /listening on http:/);
    await expectStoppedThroughPnpm(server, data);
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
    await until(first, new RegExp(`listening on http://127.0.0.1:${port}`));
    // Away from where the other commands look: how to point them at it.
    await until(first, new RegExp(`export CONVENE_URL=http://localhost:${port} \\(or pass --url`));
    // Any free port (0): the one the system chose, as the links the server hands out name it.
    const anyPort = fromRoot(tsx, ['apps/cli/src/main.ts', 'serve', '--port', '0', '--log-format', 'text'], {
      DATABASE_URL: 'memory://',
      LOG_LEVEL: 'info',
    });
    await until(anyPort, /export CONVENE_URL=http:\/\/localhost:\d+ /);
    const chosen = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(anyPort.output())?.[1];
    expect(Number(chosen)).toBeGreaterThan(0);
    expect(anyPort.output()).toContain(`export CONVENE_URL=http://localhost:${chosen} (or pass --url`);
    anyPort.child.kill('SIGTERM');
    await anyPort.done;
    // Its log as text for a person, whatever LOG_FORMAT said.
    await fetch(`http://127.0.0.1:${port}/api/health`);
    await until(first, / {2}200 {2}GET \/api\/health {2}[\d.]+ ms/);

    const second = fromRoot(
      tsx,
      ['apps/cli/src/main.ts', 'serve', '--port', String(await freePort()), '--data-dir', data],
      {},
    );
    expect((await second.done).code).toBe(1);
    expect(second.output()).toContain('the server did not start');
    expect(second.output()).toMatch(/in use/);

    const bad = fromRoot(tsx, ['apps/cli/src/main.ts', 'serve', '--port', 'eighty'], {});
    expect((await bad.done).code).toBe(2);
    expect(bad.output()).toContain('--port must be a number');
    const badFormat = fromRoot(tsx, ['apps/cli/src/main.ts', 'serve', '--log-format', 'yaml'], {});
    expect((await badFormat.done).code).toBe(2);
    expect(badFormat.output()).toMatch(/--log-format/);
    // Not PostgreSQL: refused, not the embedded database in its place.
    const elsewhere = tempDir();
    const badUrl = fromRoot(
      tsx,
      [
        'apps/cli/src/main.ts',
        'serve',
        '--database-url',
        'mysql://x/y',
        '--data-dir',
        join(elsewhere, 'data'),
      ],
      {},
    );
    expect((await badUrl.done).code).toBe(2);
    expect(badUrl.output()).toContain('DATABASE_URL: must be a PostgreSQL URL');
    expect(badUrl.output()).toContain('not a mysql: URL');
    expect(badUrl.output()).not.toContain('listening');
    expect(existsSync(join(elsewhere, 'data'))).toBe(false);

    const exited = new Promise((resolve) => first.child.once('close', resolve));
    process.kill(JSON.parse(readFileSync(join(data, 'convene.lock'), 'utf8')).pid, 'SIGINT');
    expect(await exited).toBe(0);
  }, 240_000);

  it('pnpm convene runs the CLI from source, in the directory it was typed in', async () => {
    const user = new User(undefined);
    try {
      // A space saved for a server that does not answer: `artifact create --file` then reads the
      // file before it calls the server, so where it looked for the file shows in what it reports.
      const spaceId = randomUUID();
      const configDir = join(user.env.XDG_CONFIG_HOME!, 'convene');
      mkdirSync(configDir, { recursive: true, mode: 0o700 });
      const space = { spaceId, name: 'Offline', role: 'owner', key: 'own_x', participantId: randomUUID() };
      writeFileSync(
        join(configDir, 'credentials.json'),
        JSON.stringify({
          version: 1,
          hosts: {
            'http://127.0.0.1:9': {
              defaultSpace: spaceId,
              spaces: { [spaceId]: { ...space, savedAt: new Date().toISOString() } },
            },
          },
        }),
        { mode: 0o600 },
      );
      // Typed in apps/ (no package.json there, so pnpm runs the root's script), `cli/README.md` is
      // apps/cli/README.md; from the root, where pnpm runs scripts, there is no such file.
      const typedIn = join(repoRoot, 'apps');
      expect(existsSync(join(typedIn, 'cli/README.md'))).toBe(true);
      expect(existsSync(join(repoRoot, 'cli/README.md'))).toBe(false);
      const env: NodeJS.ProcessEnv = { ...process.env, ...user.env, CONVENE_URL: 'http://127.0.0.1:9' };
      // Where it was typed reaches the script as INIT_CWD, which pnpm sets itself (it does not keep
      // one it inherits, as the pnpm running vitest passes down): none is handed in here.
      delete env.INIT_CWD;
      const child = spawn(
        'pnpm',
        ['--silent', 'convene', 'artifact', 'create', 'x', '--file', 'cli/README.md'],
        {
          cwd: typedIn,
          env,
          stdio: ['pipe', 'pipe', 'pipe'],
        },
      );
      const result = await finished(child, { timeoutMs: 150_000 });
      // It read the file where it was typed, then tried the server (exit 1); run from the root it
      // would be "cannot open cli/README.md" (exit 5).
      expect(result.stderr).not.toContain('cannot open');
      expect({ code: result.code, stderr: result.stderr }).toEqual({
        code: 1,
        // The request named with its real URL, the space's id in it.
        stderr: expect.stringMatching(
          /^✗ cannot reach http:\/\/127\.0\.0\.1:9: .+ \(\w+: GET http:\/\/127\.0\.0\.1:9\/hub\/space\/[0-9a-f-]{36}/,
        ),
      });
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

describe('serve --help', () => {
  it('lists every environment variable the server reads, each explained in the README it points to (reachable once installed)', async () => {
    const someone = new User(undefined);
    const help = (await someone.run(['serve', '--help'])).stdout;
    someone.remove();
    expect(help).toContain('$(npm root -g)/@convene/cli/README.md');
    const environment = help.slice(help.indexOf('\nEnvironment'));
    const named = new Set(environment.match(/\b[A-Z][A-Z0-9_]{2,}\b/g));
    // What the server reads (its env.ts), each named in the help.
    const source = readFileSync(join(repoRoot, 'packages/server/src/env.ts'), 'utf8');
    const read = [...source.matchAll(/^\s+([A-Z][A-Z0-9_]{2,}):/gm)].map((m) => m[1]!);
    expect(read.length).toBeGreaterThan(20);
    for (const name of read) expect({ name, listed: named.has(name) }).toEqual({ name, listed: true });
    const readme = readFileSync(join(repoRoot, 'apps/cli/README.md'), 'utf8');
    for (const name of read)
      expect({ name, explained: new RegExp(`\`${name}[\`=]`).test(readme) }).toEqual({
        name,
        explained: true,
      });
    // The global options serve has no use for are not offered: --json is its --log-format json.
    const globals = help.slice(help.indexOf('Global Options:'), help.indexOf('Examples:'));
    expect(globals).not.toMatch(/--json|--quiet|--url/);
    expect(help).toContain('json (also --json)');
  });

  it('--json is --log-format json; --quiet and a --json beside --log-format text are usage errors', async () => {
    const someone = new User(undefined);
    try {
      const quiet = await someone.run(['serve', '-q']);
      expect(quiet.code).toBe(2);
      expect(quiet.stderr).toContain('serve takes no --quiet');
      expect(quiet.stderr).toContain('LOG_LEVEL=warn');
      const both = await someone.run(['serve', '--json', '--log-format', 'text']);
      expect(both.code).toBe(2);
      expect(both.stderr).toContain('--json and --log-format text ask for two formats of the log');
      // With --json, what it says of a refused setting is a line of its JSON log.
      const refused = await someone.run(['serve', '--json', '--port', 'eighty'], {
        env: { TEST_DATABASE_URL: '', LOG_LEVEL: 'warn' },
      });
      expect(refused.code).toBe(2);
      expect(JSON.parse(refused.stderr)).toMatchObject({
        level: 60,
        msg: '--port must be a number from 0 to 65535, not "eighty"',
      });
      const data = tempDir();
      const child = spawn(
        process.execPath,
        [bundle, 'serve', '--json', '--port', String(await freePort()), '--data-dir', data],
        {
          env: childEnv({ TEST_DATABASE_URL: '', LOG_LEVEL: 'info', LOG_FORMAT: '' }),
          stdio: ['ignore', 'pipe', 'pipe'],
          detached: true,
        },
      );
      started.push(child);
      const server = watch(child, { timeoutMs: 60_000 });
      const [line] = await server.waitFor(/^\{.*listening on http:.*\}$/m, {
        in: 'output',
        timeoutMs: 60_000,
      });
      expect(JSON.parse(line)).toMatchObject({ level: 30 });
      child.kill('SIGTERM');
      expect((await server.done).code).toBe(0);
    } finally {
      someone.remove();
    }
  }, 120_000);
});

describe('convene serve stopped by a signal', () => {
  it('stops cleanly when its terminal closes (SIGHUP), exit 129; SIGTERM stays exit 0', async () => {
    for (const [signal, code] of [
      ['SIGHUP', 129],
      ['SIGTERM', 0],
    ] as const) {
      const data = tempDir();
      const child = spawn(
        process.execPath,
        [bundle, 'serve', '--port', String(await freePort()), '--data-dir', data],
        {
          env: childEnv({ TEST_DATABASE_URL: '', LOG_LEVEL: 'warn' }),
          stdio: ['ignore', 'pipe', 'pipe'],
          // Its own process group, as the others here, so that afterAll can stop what a failure left.
          detached: true,
        },
      );
      started.push(child);
      const server = watch(child, { timeoutMs: 60_000 });
      await server.waitFor(/listening on http:/, { in: 'output', timeoutMs: 60_000 });
      child.kill(signal);
      const result = await server.done;
      expect({ signal, code: result.code }).toEqual({ signal, code });
      // Shut down as on SIGTERM: the database closed and the data directory's lock released.
      expect(server.output()).toContain(`${signal} received: shutting down`);
      expect(existsSync(join(data, 'convene.lock'))).toBe(false);
    }
  }, 120_000);
});

describe('convene serve in a terminal window', () => {
  it('stops cleanly when the window closes and ends by SIGHUP, as the README says (129), not by a crash', async () => {
    const data = tempDir();
    const terminal = new Terminal(
      [process.execPath, bundle, 'serve', '--port', String(await freePort()), '--data-dir', data],
      { TEST_DATABASE_URL: '', LOG_LEVEL: 'warn' },
      data,
    );
    try {
      await eventually(() => expect(terminal.screen()).toContain('Convene listening on'), 60_000);
    } finally {
      // The window closed: the server gets SIGHUP, and its terminal is gone.
      terminal.close();
    }
    // Node aborted (SIGABRT) restoring the settings of the terminal that was gone, after the stop.
    await eventually(() => expect(terminal.ended()).toEqual({ code: null, signal: 'SIGHUP' }), 30_000);
    // Stopped cleanly first: the database closed and the data directory's lock released.
    expect(existsSync(join(data, 'convene.lock'))).toBe(false);
  }, 120_000);
});

describe('convene serve with JSON logs', () => {
  it('says why it did not start as one JSON line of the log on stderr (level 60, hint and exit code among its fields): exit 2 for refused settings, 1 for a failed start', async () => {
    const run = (args: string[], env: Record<string, string> = {}) =>
      finished(
        spawn(process.execPath, [bundle, 'serve', ...args], {
          env: childEnv({ TEST_DATABASE_URL: '', LOG_FORMAT: 'json', LOG_LEVEL: 'warn', ...env }),
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
        { timeoutMs: 90_000 },
      );
    const linesOf = (text: string) =>
      text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line));
    const refused = await run([], { RATE_LIMIT_MAX: 'x' });
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(linesOf(refused.stderr)).toEqual([
      expect.objectContaining({
        level: 60,
        exitCode: 2,
        hint: 'See `convene serve --help`.',
        msg: expect.stringMatching(/^invalid configuration: RATE_LIMIT_MAX: /),
      }),
    ]);
    const badPort = await run(['--port', 'eighty']);
    expect(badPort.code).toBe(2);
    expect(linesOf(badPort.stderr)).toEqual([
      expect.objectContaining({ level: 60, msg: '--port must be a number from 0 to 65535, not "eighty"' }),
    ]);

    const taken = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
    try {
      const data = join(tempDir(), 'data');
      const failed = await run(['--port', String(port), '--data-dir', data]);
      expect(failed.code).toBe(1);
      // Said before any database was made for nothing.
      expect(existsSync(data)).toBe(false);
      expect(linesOf(failed.stderr).at(-1)).toMatchObject({
        level: 60,
        exitCode: 1,
        hint: 'Another process listens on that port: choose another with --port or PORT.',
        msg: expect.stringMatching(/^the server did not start: .*EADDRINUSE/),
      });
      // Every line it printed is JSON.
      expect(() => linesOf(failed.stdout)).not.toThrow();
    } finally {
      taken.close();
    }
  }, 180_000);
});
