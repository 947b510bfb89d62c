import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { connect, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { createPostgresTestDatabase } from '@convene/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { Harness } from './helpers';
import { freePort, onPostgres } from './helpers/harness';
import { type ServerProcess, serverBundle, spawnServer } from './helpers/process';

/** A PostgreSQL ErrorResponse (FATAL) with this SQLSTATE, as a server sends it to a connecting client. */
function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0\0`);
  const header = Buffer.alloc(5);
  header.write('E');
  header.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([header, fields]);
}

/** Whether this machine lets a test start a process as pid 1 of a new pid namespace (root, Linux). */
const canUnshare = spawnSync('unshare', ['--pid', '--fork', '--kill-child', 'true']).status === 0;

// Real server processes: what `pnpm start` runs.
describe.runIf(!onPostgres())('server process on the embedded database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'convene-data-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints its URL, refuses a second server on the same DATA_DIR, stops on SIGTERM and keeps its data', async () => {
    const port = await freePort();
    const first = spawnServer({ DATA_DIR: dir, PORT: String(port) });
    const url = await first.ready;
    expect(url).toBe(`http://127.0.0.1:${port}`);
    const h = new Harness(url);
    const space = await h.createSpace({ name: 'Persistent' });

    const second = spawnServer({ DATA_DIR: dir, PORT: String(await freePort()) });
    expect(await second.exited).not.toBe(0);
    expect(second.output()).toContain(dir);
    expect(second.output()).toMatch(/in use/);
    // A copy taken while it runs (its lock came along) is said to be one, with what to do.
    const copy = join(mkdtempSync(join(tmpdir(), 'convene-hot-copy-')), 'data');
    cpSync(dir, copy, { recursive: true });
    const onCopy = spawnServer({ DATA_DIR: copy, PORT: String(await freePort()) });
    expect(await onCopy.exited).not.toBe(0);
    expect(onCopy.output()).toContain(
      `data directory ${copy} was copied from ${dir} while the Convene server there`,
    );
    expect(onCopy.output()).not.toMatch(/in use/);
    rmSync(copy, { recursive: true, force: true });

    const started = Date.now();
    expect(await first.stop('SIGTERM')).toBe(0);
    expect(Date.now() - started).toBeLessThan(15_000);

    const again = spawnServer({ DATA_DIR: dir, PORT: String(port) });
    await again.ready;
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect(view.status).toBe(200);
    expect(view.body.name).toBe('Persistent');
    expect(await again.stop('SIGTERM')).toBe(0);
  }, 90_000);

  it('loads the MCP runtime a second after it listens: an install replaced under it (an upgrade) breaks no /mcp call', async () => {
    // A copy of the bundle, whose lazily imported chunks (the MCP runtime) then go, as `npm
    // install -g` of a new version replaces them under a running `convene serve`.
    const copy = mkdtempSync(join(tmpdir(), 'convene-bundle-'));
    cpSync(dirname(serverBundle), copy, { recursive: true });
    const server = spawnServer(
      { DATA_DIR: join(dir, 'upgraded'), PORT: String(await freePort()) },
      { bundle: join(copy, basename(serverBundle)) },
    );
    try {
      const url = await server.ready;
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      rmSync(join(copy, 'chunks'), { recursive: true, force: true });
      const init = await fetch(`${url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: {
            protocolVersion: '2025-06-18',
            capabilities: {},
            clientInfo: { name: 't', version: '1' },
          },
        }),
      });
      expect(init.status, await init.clone().text()).toBe(200);
      expect(
        ((await init.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name,
      ).toBeTruthy();
    } finally {
      await server.stop();
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('stops at once on SIGTERM beside clients that stopped mid-request, and still answers the request it is handling', async () => {
    const server = spawnServer({ DATA_DIR: dir, PORT: String(await freePort()) });
    const url = new URL(await server.ready);
    const h = new Harness(url.origin);
    const space = await h.createSpace({ name: 'Half-sent requests' });
    const raw = (request: string) => {
      const socket = connect(Number(url.port), url.hostname);
      let received = '';
      socket.on('data', (chunk) => (received += chunk.toString()));
      socket.on('error', () => {});
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.write(request);
      return { received: () => received, closed, socket };
    };
    // Headers without their blank line; a body 8 bytes of its 1000; a long poll being handled.
    const headers = raw('GET /api/health HTTP/1.1\r\nHost: x\r\n');
    const body = raw(
      `POST /hub/space HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":`,
    );
    const polled = h.get(`/hub/space/${space.spaceId}/messages?wait=30`, { key: space.ownerKey });
    // Everything has reached the server (the long poll waits in its handler).
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const started = Date.now();
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(server.output()).not.toContain('took too long');
    // The one handled was answered (a long poll says to retry elsewhere); the two never received
    // in full were closed unanswered.
    const answered = await polled;
    expect(answered.status).toBe(503);
    expect(answered.body).toEqual({
      error: 'the server is shutting down; retry shortly',
      code: 'shutting_down',
    });
    await Promise.all([headers.closed, body.closed]);
    expect(headers.received()).toBe('');
    expect(body.received()).toBe('');
  }, 90_000);

  it('drains on SIGTERM for SHUTDOWN_DRAIN_S: its health probe answers 503 while requests are still served; a second signal ends the drain', async () => {
    const server = spawnServer({
      DATA_DIR: dir,
      PORT: String(await freePort()),
      SHUTDOWN_DRAIN_S: '60',
      LOG_LEVEL: 'info',
    });
    const h = new Harness(await server.ready);
    const space = await h.createSpace({ name: 'Draining' });
    expect((await h.get('/api/health')).status).toBe(200);
    const started = Date.now();
    server.child.kill('SIGTERM');
    await expect.poll(async () => (await h.get('/api/health')).status).toBe(503);
    // Said before the drain begins, but its line may reach the pipe after the probe's answer.
    await expect.poll(() => server.output()).toContain('SIGTERM received: draining for 60 s');
    const served = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect(served.status).toBe(200);
    expect(served.headers.get('connection')).toBe('close');
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(server.output()).not.toContain('took too long');
  }, 90_000);

  it('writes one line per request to standard output, and loses none when it stops', async () => {
    const port = await freePort();
    // A data directory of its own, open to others: the start closes it, and logs so before it is ready.
    const logged = join(dir, 'logged');
    mkdirSync(logged);
    chmodSync(logged, 0o755);
    const server = spawnServer({ DATA_DIR: logged, PORT: String(port), LOG_LEVEL: 'info' });
    const url = await server.ready;
    const lineOf = (id: string) =>
      server
        .output()
        .split('\n')
        .filter((line) => line.includes(`"reqId":"${id}"`));
    // Buffered, but written within a quarter of a second while the server runs.
    await fetch(`${url}/api/health`, { headers: { 'Request-Id': 'log-while-running' } });
    await expect.poll(() => lineOf('log-while-running').length, { timeout: 5_000 }).toBe(1);
    expect(JSON.parse(lineOf('log-while-running')[0]!)).toMatchObject({
      msg: 'request completed',
      req: { method: 'GET', url: '/api/health' },
      res: { statusCode: 200 },
    });
    // A long poll open at SIGTERM: cut off with 503 shutting_down, which is no failure to warn of.
    const space = (await (
      await fetch(`${url}/hub/space`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'Polled', description: 'open at the stop' }),
      })
    ).json()) as { spaceId: string; ownerPrivateKey: string };
    const poll = fetch(`${url}/hub/space/${space.spaceId}/messages?wait=30`, {
      headers: { 'X-Private-Key': space.ownerPrivateKey, 'Request-Id': 'poll-at-stop' },
    });
    await new Promise((r) => setTimeout(r, 500));
    // Answered just before SIGTERM: written by the time the process has exited.
    const burst = Array.from({ length: 20 }, (_, i) => `log-before-stop-${i}`);
    await Promise.all(burst.map((id) => fetch(`${url}/api/health`, { headers: { 'Request-Id': id } })));
    expect(await server.stop('SIGTERM')).toBe(0);
    const cut = await poll;
    expect(cut.status).toBe(503);
    expect(await cut.json()).toMatchObject({ code: 'shutting_down' });
    for (const id of burst) expect(lineOf(id)).toHaveLength(1);
    expect(lineOf('poll-at-stop').map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ msg: 'request completed', res: { statusCode: 503 } }),
    ]);
    // Every line is JSON, its own readiness and shutdown lines too, for a shipper reading them all.
    const lines = server
      .output()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(lines.find((line) => line.msg.startsWith('Convene listening on'))).toMatchObject({
      level: 30,
      url,
    });
    // The start says it began, and what it logged (the directory it closed) comes before the readiness line.
    const ready = lines.findIndex((line) => line.msg.startsWith('Convene listening on'));
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: expect.stringMatching(/^Convene starting \(database: /),
    });
    const closed = lines.findIndex((line) => line.msg.endsWith('made it private (700)'));
    expect(closed).toBeGreaterThan(0);
    expect(closed).toBeLessThan(ready);
    expect(lines.find((line) => line.msg === 'SIGTERM received: shutting down')).toMatchObject({ level: 30 });
    expect(lines.filter((line) => line.msg === 'Convene stopped')).toEqual([
      expect.objectContaining({ level: 30 }),
    ]);
    // In the order they happened: the requests answered before SIGTERM, then its line, and the
    // stop last (the requests' lines had come after it, flushed at exit).
    const stopping = lines.findIndex((line) => line.msg === 'SIGTERM received: shutting down');
    const answered = lines.filter((line) => burst.includes(line.reqId)).map((line) => lines.indexOf(line));
    expect(answered).toHaveLength(burst.length);
    expect(Math.max(...answered)).toBeLessThan(stopping);
    expect(lines.at(-1)).toMatchObject({ msg: 'Convene stopped' });
    // Said once: Fastify's own "Server listening at" is not printed beside it.
    expect(lines.filter((line) => /listening/i.test(line.msg))).toHaveLength(1);
  }, 90_000);

  it('stops cleanly (exit 0) when the reader of its JSON log has gone away, and starts again on its data', async () => {
    const port = await freePort();
    const env = { DATA_DIR: join(dir, 'reader-gone'), PORT: String(port), LOG_LEVEL: 'info' };
    const server = spawnServer(env);
    const url = await server.ready;
    // `convene serve | head`, and head has exited: every write to standard output now fails (EPIPE).
    server.child.stdout?.destroy();
    await new Promise((r) => setTimeout(r, 300));
    for (let i = 0; i < 5; i++) expect((await fetch(`${url}/api/health`)).status).toBe(200);
    // Its shutdown lines and the buffered request lines cannot be written: it stops all the same.
    expect(await server.stop('SIGTERM')).toBe(0);
    const again = spawnServer(env);
    expect(await again.ready).toBe(url);
    expect(await again.stop('SIGTERM')).toBe(0);
  }, 60_000);

  it('with JSON logs, says why it did not start as a JSON line too: level 60 on stderr, its exit code among the fields', async () => {
    const everyLine = (server: ServerProcess) =>
      server
        .output()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line));
    const refused = spawnServer({ LOG_FORMAT: 'json', RATE_LIMIT_MAX: 'x', DATA_DIR: join(dir, 'unused') });
    expect(await refused.exited).toBe(2);
    expect(everyLine(refused)).toEqual([
      expect.objectContaining({
        level: 60,
        exitCode: 2,
        msg: expect.stringMatching(/^invalid configuration: RATE_LIMIT_MAX: /),
      }),
    ]);
    // A port taken: the start fails after the database opened.
    const taken = createNetServer();
    const port = await freePort();
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
    try {
      const failed = spawnServer({
        LOG_FORMAT: 'json',
        LOG_LEVEL: 'info',
        DATA_DIR: join(dir, 'port-taken'),
        PORT: String(port),
      });
      expect(await failed.exited).toBe(1);
      // Every line JSON; the fatal one once (standard error and output interleave in any order:
      // the start's info lines, the migrations' among them, may come after it).
      const lines = everyLine(failed);
      expect(lines.filter((line) => line.level >= 50)).toEqual([
        expect.objectContaining({
          level: 60,
          exitCode: 1,
          msg: expect.stringMatching(/^the server did not start: .*EADDRINUSE/),
        }),
      ]);
    } finally {
      taken.close();
    }
  }, 90_000);

  it('prints nothing on standard output at LOG_LEVEL=silent, readiness and shutdown included; a refused start still says why on stderr', async () => {
    const port = await freePort();
    const server = spawnServer({
      DATA_DIR: dir,
      PORT: String(port),
      LOG_LEVEL: 'silent',
      LOG_FORMAT: 'json',
    });
    let stdout = '';
    server.child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    // No readiness line to wait for: the health probe says when it serves.
    await expect
      .poll(
        () =>
          fetch(`http://127.0.0.1:${port}/api/health`).then(
            (res) => res.status,
            () => 0,
          ),
        {
          timeout: 60_000,
          interval: 250,
        },
      )
      .toBe(200);
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(stdout).toBe('');
    expect(server.output()).toBe('');

    const refused = spawnServer({ LOG_LEVEL: 'silent', RATE_LIMIT_MAX: 'x', DATA_DIR: join(dir, 'unused') });
    let stderr = '';
    refused.child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    expect(await refused.exited).toBe(2);
    expect(stderr).toMatch(/RATE_LIMIT_MAX/);
  }, 90_000);

  it('prints its log as text for a person when LOG_FORMAT=text', async () => {
    const server = spawnServer({
      DATA_DIR: dir,
      PORT: String(await freePort()),
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'text',
    });
    const url = await server.ready;
    await fetch(`${url}/api/health?key=secret-in-the-url`);
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(server.output()).toMatch(
      /\d\d:\d\d:\d\d {2}200 {2}GET \/api\/health\?key=\[redacted\] {2}[\d.]+ ms\n/,
    );
    expect(server.output()).not.toContain('secret-in-the-url');
    expect(server.output()).not.toContain('"reqId"');
  }, 90_000);

  it('keeps its data directory private: made 0700 under a permissive umask, an open one closed to 0700', async () => {
    const data = join(dir, 'private', 'data');
    // Started under umask 000, answers, leaves its data directory 0700, stops: what it printed.
    const run = async () => {
      const server = spawnServer(
        { DATA_DIR: data, PORT: String(await freePort()), LOG_LEVEL: 'info' },
        { umask: '000' },
      );
      // Answered: past the readiness line, its signal handlers are in place.
      expect((await fetch(`${await server.ready}/api/health`)).status).toBe(200);
      expect(statSync(data).mode & 0o777).toBe(0o700);
      expect(await server.stop('SIGTERM')).toBe(0);
      return server.output();
    };
    expect(await run()).not.toContain('made it private');

    // Opened by hand, or made by an earlier version: closed again at the next start, said once.
    chmodSync(data, 0o755);
    const said = (await run()).split('\n').filter((line) => line.includes('made it private'));
    expect(said).toHaveLength(1);
    expect(JSON.parse(said[0]!)).toMatchObject({
      level: 30,
      msg: `data directory ${data} was open to other users (mode 755): made it private (700)`,
    });
  }, 90_000);

  it('keeps its generated SECRET file private: one others may read is made 0600 at start, said once', async () => {
    const data = join(dir, 'secret-file');
    const run = async () => {
      const server = spawnServer({ DATA_DIR: data, PORT: String(await freePort()), LOG_LEVEL: 'info' });
      expect((await fetch(`${await server.ready}/api/health`)).status).toBe(200);
      expect(await server.stop('SIGTERM')).toBe(0);
      return server.output();
    };
    expect(await run()).not.toContain('made it private');
    const secret = join(data, 'secret');
    expect(statSync(secret).mode & 0o777).toBe(0o600);
    const kept = readFileSync(secret, 'utf8');

    // Made readable by hand (or copied so): closed again at the next start, said once; the same secret.
    chmodSync(secret, 0o644);
    const said = (await run()).split('\n').filter((line) => line.includes('made it private'));
    expect(said).toHaveLength(1);
    expect(JSON.parse(said[0]!)).toMatchObject({
      level: 30,
      msg: `file ${secret} was open to other users (mode 644): made it private (600)`,
    });
    expect(statSync(secret).mode & 0o777).toBe(0o600);
    expect(readFileSync(secret, 'utf8')).toBe(kept);
  }, 90_000);

  it('refuses a DATABASE_URL that is not PostgreSQL before listening; an empty one is the embedded database', async () => {
    const data = join(dir, 'not-used');
    const mysql = spawnServer({
      DATABASE_URL: 'mysql://x/y',
      DATA_DIR: data,
      PORT: String(await freePort()),
    });
    try {
      // Exits (2, a refused setting) rather than listening (its URL).
      expect(await Promise.race([mysql.exited, mysql.ready])).toBe(2);
    } finally {
      await mysql.stop();
    }
    expect(mysql.output()).toContain(
      'invalid configuration: DATABASE_URL: must be a PostgreSQL URL (postgres://… or postgresql://…), memory://, or empty for the embedded database, not a mysql: URL',
    );
    expect(mysql.output()).not.toContain('listening');
    // Not the embedded database under another name.
    expect(existsSync(data)).toBe(false);

    const empty = spawnServer({ DATABASE_URL: '', DATA_DIR: data, PORT: String(await freePort()) });
    expect((await fetch(`${await empty.ready}/api/health`)).status).toBe(200);
    expect(empty.output()).toContain(`database embedded PGlite in ${data}`);
    expect(await empty.stop('SIGTERM')).toBe(0);
  }, 90_000);

  it('starts again after a crash on the same data', async () => {
    const port = await freePort();
    const first = spawnServer({ DATA_DIR: dir, PORT: String(port) });
    await first.ready;
    const space = await new Harness(await first.ready).createSpace({ name: 'Survives a crash' });
    // The server is the process holding the data-directory lock.
    const { pid } = JSON.parse(readFileSync(join(dir, 'convene.lock'), 'utf8'));
    expect(pid).toBe(first.child.pid);
    process.kill(pid, 'SIGKILL');
    await first.exited;
    const again = spawnServer({ DATA_DIR: dir, PORT: String(port) });
    const h = new Harness(await again.ready);
    expect((await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey })).body.name).toBe(
      'Survives a crash',
    );
    expect(await again.stop('SIGTERM')).toBe(0);
  }, 90_000);

  it('waits at start for a PostgreSQL it cannot reach, a line per attempt without the password; an authentication error ends it at once', async () => {
    const port = await freePort();
    const server = spawnServer({
      DATABASE_URL: `postgres://convene:hunter2@127.0.0.1:${port}/convene`,
      SECRET: 'test-secret-0123456789abcdef',
      PORT: String(await freePort()),
    });
    try {
      // Nothing listens there: refused, again and again, while the server waits.
      const attempts = () =>
        server.output().match(/PostgreSQL cannot be reached \(connect ECONNREFUSED/g) ?? [];
      await expect.poll(() => attempts().length, { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
      expect(server.child.exitCode).toBeNull();
      const line = JSON.parse(
        server
          .output()
          .split('\n')
          .find((l) => l.includes('attempt 1,'))!,
      );
      expect(line).toMatchObject({ level: 40 });
      expect(line.msg).toMatch(
        new RegExp(
          `^PostgreSQL cannot be reached \\(connect ECONNREFUSED 127.0.0.1:${port}\\): attempt 1, trying again in 0.25 s, for \\d+ s more$`,
        ),
      );
      expect(server.output()).not.toContain('hunter2');

      // It answers now, and refuses the password: that is not waited for.
      const refusing = createNetServer((socket) => {
        socket.on('error', () => {});
        socket.once('data', () =>
          socket.end(errorResponse('28P01', 'password authentication failed for user "convene"')),
        );
      });
      await new Promise<void>((resolve) => refusing.listen(port, '127.0.0.1', resolve));
      try {
        const answered = Date.now();
        expect(await server.exited).toBe(1);
        expect(Date.now() - answered).toBeLessThan(10_000);
        // The last line, JSON as every other (the log is JSON off a terminal).
        expect(JSON.parse(server.output().trim().split('\n').at(-1)!)).toMatchObject({
          level: 60,
          msg: 'the server did not start: password authentication failed for user "convene"',
        });
        expect(server.output()).not.toContain('listening');
      } finally {
        refusing.close();
      }
    } finally {
      await server.stop('SIGKILL');
    }
  }, 90_000);

  it("starts again after a crash when the crashed server's pid names another live process", async () => {
    const data = join(dir, 'pid-reused');
    const port = await freePort();
    const first = spawnServer({ DATA_DIR: data, PORT: String(port) });
    const space = await new Harness(await first.ready).createSpace({ name: 'Pid reused' });
    first.child.kill('SIGKILL');
    await first.exited;
    // The system gave the crashed server's pid to an unrelated process, which runs.
    const unrelated = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const lock = join(data, 'convene.lock');
      writeFileSync(lock, readFileSync(lock, 'utf8').replace(String(first.child.pid), String(unrelated.pid)));
      const again = spawnServer({ DATA_DIR: data, PORT: String(port) });
      const h = new Harness(await again.ready);
      expect((await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey })).body.name).toBe(
        'Pid reused',
      );
      expect(await again.stop('SIGTERM')).toBe(0);
    } finally {
      unrelated.kill('SIGKILL');
    }
  }, 90_000);

  // A container's server is pid 1 at every start: the crashed one's lock names the new one.
  it.runIf(canUnshare)(
    'starts again after kill -9 as pid 1 of a new pid namespace each time (a container)',
    async () => {
      const data = join(dir, 'container');
      const port = await freePort();
      const under = ['unshare', '--pid', '--fork', '--kill-child'];
      /** The server's pid outside its namespace: unshare's one child. */
      const serverPid = (server: ServerProcess) =>
        Number(readFileSync(`/proc/${server.child.pid}/task/${server.child.pid}/children`, 'utf8').trim());
      const first = spawnServer({ DATA_DIR: data, PORT: String(port) }, { under });
      const space = await new Harness(await first.ready).createSpace({ name: 'In a container' });
      expect(JSON.parse(readFileSync(join(data, 'convene.lock'), 'utf8')).pid).toBe(1);
      process.kill(serverPid(first), 'SIGKILL');
      await first.exited;

      const again = spawnServer({ DATA_DIR: data, PORT: String(port) }, { under });
      try {
        const h = new Harness(await again.ready);
        expect((await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey })).body.name).toBe(
          'In a container',
        );
        // unshare does not pass signals on: SIGTERM goes to the server itself.
        process.kill(serverPid(again), 'SIGTERM');
        expect(await again.exited).toBe(0);
      } finally {
        await again.stop('SIGKILL');
      }
    },
    90_000,
  );
});

describe.runIf(onPostgres())('a server process on PostgreSQL', () => {
  it('starts once its PostgreSQL, unreachable at first, begins to answer (started beside it by compose or systemd)', async () => {
    const pg = await createPostgresTestDatabase(process.env.TEST_DATABASE_URL!);
    const real = new URL(pg.url);
    // PostgreSQL's address as the server knows it: nothing listens there for the first seconds.
    const port = await freePort();
    const late = new URL(pg.url);
    late.host = `127.0.0.1:${port}`;
    const server = spawnServer({
      DATABASE_URL: late.toString(),
      SECRET: 'test-secret-0123456789abcdef',
      PORT: String(await freePort()),
    });
    const proxy = createNetServer((socket) => {
      const upstream = connect(Number(real.port || 5432), real.hostname);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
      socket.pipe(upstream).pipe(socket);
    });
    try {
      await expect.poll(() => server.output(), { timeout: 20_000 }).toMatch(/PostgreSQL cannot be reached/);
      await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
      const url = await server.ready;
      expect((await fetch(`${url}/api/health`)).status).toBe(200);
      expect(server.output()).toContain('database PostgreSQL');
      expect(await server.stop('SIGTERM')).toBe(0);
    } finally {
      await server.stop('SIGKILL');
      proxy.close();
      await pg.drop();
    }
  }, 90_000);
});

describe.runIf(onPostgres())('two server processes on one PostgreSQL', () => {
  it('serve the same spaces', async () => {
    const pg = await createPostgresTestDatabase(process.env.TEST_DATABASE_URL!);
    const env = { DATABASE_URL: pg.url, SECRET: 'shared-secret-0123456789' };
    const a = spawnServer({ ...env, PORT: String(await freePort()) });
    const b = spawnServer({ ...env, PORT: String(await freePort()) });
    try {
      const [urlA, urlB] = await Promise.all([a.ready, b.ready]);
      const space = await new Harness(urlA).createSpace({ name: 'Shared' });
      const view = await new Harness(urlB).get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
      expect(view.status).toBe(200);
      expect(view.body.name).toBe('Shared');
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      await pg.drop();
    }
  }, 90_000);
});

describe.runIf(onPostgres())('changing SECRET while a node still runs with the old one', () => {
  it('the node left on the old SECRET refuses (503) what it would seal or open, says to restart it, and nothing acknowledged is lost', async () => {
    const pg = await createPostgresTestDatabase(process.env.TEST_DATABASE_URL!);
    const OLD = 'rotation-old-secret-0123456789';
    const NEW = 'rotation-new-secret-0123456789';
    const node = async (env: Record<string, string>) => {
      const server = spawnServer({ DATABASE_URL: pg.url, PORT: String(await freePort()), ...env });
      return { server, h: new Harness(await server.ready) };
    };
    const running: ServerProcess[] = [];
    const started = async (env: Record<string, string>) => {
      const n = await node(env);
      running.push(n.server);
      return n;
    };
    try {
      let a = await started({ SECRET: OLD });
      const b = await started({ SECRET: OLD });
      const signedUp = await a.h.post('/hub/auth/signup', {
        body: { email: 'ops@example.com', password: 'correct horse battery' },
      });
      expect(signedUp.status).toBe(201);
      const bearer = { Authorization: `Bearer ${signedUp.body.token}` };
      const userToken = (await a.h.post('/hub/me/tokens', { headers: bearer, body: {} })).body
        .token as string;
      const linked = (h: Harness, name: string) =>
        h.post('/hub/space', { headers: { 'X-User-Token': userToken }, body: { name, description: 'd' } });
      const keyOf = (h: Harness, spaceId: string) => h.get(`/hub/space/${spaceId}/key`, { headers: bearer });
      const first = await linked(a.h, 'before the change');
      expect(first.status).toBe(200);

      // A rolling change: A restarts with the new SECRET while B keeps running with the old one.
      expect(await a.server.stop('SIGTERM')).toBe(0);
      a = await started({ SECRET: NEW, PREVIOUS_SECRET: OLD, LOG_LEVEL: 'info' });
      // The app's log is written in chunks: after the readiness line, within a quarter second.
      await expect
        .poll(() => a.server.output())
        .toMatch(/SECRET changed: \d+ sealed values were sealed again under the new one/);

      // B can no longer seal or open under the deployment's SECRET: it refuses rather than store
      // a key nobody could open, and its log says what to do.
      const refused = await linked(b.h, 'made on the old-secret node');
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ code: 'unavailable' });
      expect((await keyOf(b.h, first.body.spaceId)).status).toBe(503);
      await expect.poll(() => b.server.output()).toMatch(/restarted with the new SECRET/);
      // A serves the key the human was given.
      const viaA = await keyOf(a.h, first.body.spaceId);
      expect(viaA.status).toBe(200);
      expect(viaA.body.privateKey).toBe(first.body.ownerPrivateKey);

      // B restarted as it should be: nothing was left sealed under the old SECRET.
      expect(await b.server.stop('SIGTERM')).toBe(0);
      const b2 = await started({ SECRET: NEW, PREVIOUS_SECRET: OLD, LOG_LEVEL: 'info' });
      await expect.poll(() => b2.server.output()).toMatch(/nothing is sealed under it any more/);
      const second = await linked(b2.h, 'after the change');
      expect(second.status).toBe(200);
      for (const h of [a.h, b2.h])
        for (const space of [first.body, second.body]) {
          const key = await keyOf(h, space.spaceId);
          expect(key.status).toBe(200);
          expect(key.body.privateKey).toBe(space.ownerPrivateKey);
        }
    } finally {
      await Promise.all(running.map((server) => server.stop()));
      await pg.drop();
    }
  }, 180_000);
});
