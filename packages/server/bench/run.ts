// `pnpm bench`: Convene's message path against bare baselines, on PostgreSQL, in one run.
// Loopback only; every loop is bounded in count and time. See README "Benchmarks".
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent, type ClientRequest, get, request } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPostgresTestDatabase } from '@convene/core/testing';
import { postgresCpuMs, processCpuMs } from './cpu';
import { httpRequest, percentile, runLoad } from './http-load';
import { ensurePostgres, start, stop } from './processes';
import { wallClock } from './sse-fleet';

const here = dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes('--quick');
const LOAD_MS = quick ? 4_000 : 10_000;
const WARMUP_MS = quick ? 2_000 : 3_000;
const CONNECTIONS = 16;
const FANOUT_S = quick ? 5 : 10;

const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

async function main() {
  const serverUrl = await ensurePostgres();
  const { url: databaseUrl, drop } = await createPostgresTestDatabase(serverUrl);
  const children: ChildProcess[] = [];
  const results: Record<string, unknown> = {};
  try {
    console.log(`PostgreSQL: ${databaseUrl.replace(/\/\/[^@]*@/, '//')}`);

    // 1. Request throughput and latency: bare route vs sendMessage.
    const bare = await start('bare-route.ts', { DATABASE_URL: databaseUrl }, children);
    const keys = Array.from({ length: CONNECTIONS }, () => randomBytes(32).toString('hex'));
    await postJson(bare.port, '/keys', { keys });
    const content = 'x'.repeat(180);
    const bareRequest = (i: number) =>
      httpRequest('POST', '/bare', { 'X-Key': keys[i]! }, JSON.stringify({ content }));
    await load(bare.port, bareRequest, WARMUP_MS);
    const bareRun = await load(bare.port, bareRequest, LOAD_MS, bare.child);
    progress('bare route', bareRun);
    await stop(bare.child);

    // Information: the message path alone, without the HTTP policy stack.
    const core = await start('core-route.ts', { DATABASE_URL: databaseUrl }, children);
    const coreSpaces = await Promise.all(
      Array.from({ length: CONNECTIONS }, (_, i) => createSpace(core.port, `core ${i}`)),
    );
    const coreRequest = (i: number) =>
      httpRequest(
        'POST',
        `/hub/space/${coreSpaces[i]!.spaceId}/messages`,
        { 'X-Private-Key': coreSpaces[i]!.ownerPrivateKey },
        JSON.stringify({ content }),
      );
    await load(core.port, coreRequest, WARMUP_MS);
    const coreRun = await load(core.port, coreRequest, LOAD_MS / 2, core.child);
    progress('sendMessage use case in a bare route', coreRun);
    await stop(core.child);

    const convene = await start(
      'convene-node.ts',
      {
        DATABASE_URL: databaseUrl,
        RATE_LIMIT_MAX: '1000000000',
        LOG_LEVEL: 'error',
        SECRET: 'bench-secret-0123456789abcdef',
      },
      children,
    );
    const spaces = await Promise.all(
      Array.from({ length: CONNECTIONS }, (_, i) => createSpace(convene.port, `bench ${i}`)),
    );
    const sendRequest = (i: number) =>
      httpRequest(
        'POST',
        `/hub/space/${spaces[i]!.spaceId}/messages`,
        { 'X-Private-Key': spaces[i]!.ownerPrivateKey },
        JSON.stringify({ content }),
      );
    await load(convene.port, sendRequest, WARMUP_MS);
    const sendRun = await load(convene.port, sendRequest, LOAD_MS, convene.child);
    progress('sendMessage', sendRun);
    // Information only: every connection on one space (one row lock serialises them).
    const oneSpace = (_: number) => sendRequest(0);
    const oneSpaceRun = await load(convene.port, oneSpace, LOAD_MS / 2, convene.child);
    progress('sendMessage, one space', oneSpaceRun);
    // Information only: a stream open on every space, so every message also pays its NOTIFY (a
    // space nobody listens to is not notified) and the node's hub writes it to the stream.
    const streams = await Promise.all(spaces.map((space) => openStream(convene.port, space)));
    const streamedRun = await load(convene.port, sendRequest, LOAD_MS / 2, convene.child);
    for (const stream of streams) stream.destroy();
    progress('sendMessage, a stream on every space', streamedRun);
    const healthRun = await load(
      convene.port,
      () => httpRequest('GET', '/api/health', {}),
      LOAD_MS / 2,
      convene.child,
    );
    progress('health', healthRun);

    // 2. Fan-out: bare broadcaster vs Convene's stream.
    const broadcaster = await start('bare-broadcaster.ts', {}, children);
    const bare1000 = await fanOut({
      port: broadcaster.port,
      subscribers: 1000,
      rate: 20,
      path: '/sse',
      headers: {},
      readyMarker: ': hello',
      publish: (body) => postJson(broadcaster.port, '/publish', body),
    });
    const bare5000 = await fanOut({
      port: broadcaster.port,
      subscribers: 5000,
      rate: 10,
      path: '/sse',
      headers: {},
      readyMarker: ': hello',
      publish: (body) => postJson(broadcaster.port, '/publish', body),
    });
    await stop(broadcaster.child);

    const conveneFan = async (subscribers: number, rate: number) => {
      const space = await createSpace(convene.port, `fan-out ${subscribers}`);
      return fanOut({
        port: convene.port,
        subscribers,
        rate,
        path: `/hub/space/${space.spaceId}/messages/stream`,
        headers: { 'X-Private-Key': space.ownerPrivateKey },
        readyMarker: 'event: context',
        publish: (body) =>
          postJson(convene.port, `/hub/space/${space.spaceId}/messages`, body, space.ownerPrivateKey),
      });
    };
    const convene10 = await conveneFan(10, 20);
    const convene1000 = await conveneFan(1000, 20);
    const convene5000 = await conveneFan(5000, 10);
    await stop(convene.child);

    // Information: the same route with the in-process rate limiter instead of the database's.
    const memory = await start(
      'convene-node.ts',
      {
        DATABASE_URL: databaseUrl,
        RATE_LIMIT_MAX: '1000000000',
        LOG_LEVEL: 'error',
        SECRET: 'bench-secret-0123456789abcdef',
        BENCH_RATE_LIMITER: 'memory',
      },
      children,
    );
    await load(memory.port, sendRequest, WARMUP_MS);
    const memoryRun = await load(memory.port, sendRequest, LOAD_MS / 2, memory.child);
    progress('sendMessage, in-process rate limiter', memoryRun);
    await stop(memory.child);

    // 3. Report.
    const rps = (r: typeof bareRun) => r.requests / (r.elapsedMs / 1000);
    const row = (name: string, r: typeof bareRun) => ({
      scenario: name,
      'req/s': round(rps(r), 0),
      'p50 ms': round(percentile(r.latencies, 50), 2),
      'p99 ms': round(percentile(r.latencies, 99), 2),
      errors: r.errors,
      'server CPU µs/req': r.serverCpuUs ?? '-',
      'PostgreSQL CPU µs/req': r.postgresCpuUs ?? '-',
    });
    console.log(`\nRequests (${CONNECTIONS} keep-alive connections, ${LOAD_MS / 1000} s each)`);
    console.table([
      row('bare route (read 1 row by key + insert 1 row)', bareRun),
      row(`sendMessage (${CONNECTIONS} spaces)`, sendRun),
      row('sendMessage (1 space, info only)', oneSpaceRun),
      row('sendMessage, a stream on every space (info only)', streamedRun),
      row('sendMessage, in-process rate limiter (info only)', memoryRun),
      row('health: HTTP policy + adapter floor (info only)', healthRun),
      row('sendMessage use case in a bare route (info only)', coreRun),
    ]);
    const fanRow = (name: string, r: FanOutResult) => ({
      scenario: name,
      deliveries: r.deliveries,
      lost: r.lost,
      duplicated: r.duplicates,
      reordered: r.reordered,
      'p50 ms': round(r.p50),
      'p99 ms': round(r.p99),
      'send p50 ms': round(r.sendP50, 2),
      'send p99 ms': round(r.sendP99, 2),
    });
    console.log(`\nFan-out (${FANOUT_S} s of messages each)`);
    console.table([
      fanRow('bare broadcaster 1000 × 20/s', bare1000),
      fanRow('Convene stream 1000 × 20/s', convene1000),
      fanRow('bare broadcaster 5000 × 10/s', bare5000),
      fanRow('Convene stream 5000 × 10/s', convene5000),
      fanRow('Convene stream 10 × 20/s', convene10),
    ]);

    const checks = [
      {
        target: 'sendMessage throughput ≥ 0.5× bare route',
        ratio: rps(sendRun) / rps(bareRun),
        ok: rps(sendRun) / rps(bareRun) >= 0.5 && sendRun.errors === 0,
      },
      {
        target: 'sendMessage p99 ≤ 2× bare route',
        ratio: percentile(sendRun.latencies, 99) / percentile(bareRun.latencies, 99),
        ok: percentile(sendRun.latencies, 99) / percentile(bareRun.latencies, 99) <= 2,
      },
      {
        target: 'fan-out 1000 × 20/s: 0 lost, duplicated or reordered',
        ratio: convene1000.lost + convene1000.duplicates + convene1000.reordered,
        ok: convene1000.lost + convene1000.duplicates + convene1000.reordered === 0,
      },
      {
        target: 'fan-out 1000 × 20/s: p99 ≤ 2× bare broadcaster',
        ratio: convene1000.p99 / bare1000.p99,
        ok: convene1000.p99 / bare1000.p99 <= 2,
      },
      {
        target: 'fan-out 5000 × 10/s: 0 lost',
        ratio: convene5000.lost,
        ok: convene5000.lost === 0,
      },
      {
        target: 'sender p50 at 1000 subscribers ≤ 1.5× at 10',
        ratio: convene1000.sendP50 / convene10.sendP50,
        ok: convene1000.sendP50 / convene10.sendP50 <= 1.5,
      },
      {
        target: 'sender p99 at 1000 subscribers ≤ 1.5× at 10',
        ratio: convene1000.sendP99 / convene10.sendP99,
        ok: convene1000.sendP99 / convene10.sendP99 <= 1.5,
      },
    ];
    console.log('\nTargets');
    console.table(
      checks.map((c) => ({ target: c.target, value: round(c.ratio, 2), met: c.ok ? 'yes' : 'NO' })),
    );
    Object.assign(results, { bareRun: rps(bareRun), sendRun: rps(sendRun) });
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await drop().catch(() => {});
  }
}

function progress(
  name: string,
  r: { requests: number; elapsedMs: number; errors: number; statuses: unknown },
) {
  console.log(
    `  ${name}: ${round(r.requests / (r.elapsedMs / 1000), 0)} req/s, statuses ${JSON.stringify(r.statuses)}`,
  );
}

interface FanOutOptions {
  port: number;
  subscribers: number;
  /** Messages per second. */
  rate: number;
  path: string;
  headers: Record<string, string>;
  readyMarker: string;
  publish: (body: { content: string }) => Promise<unknown>;
}

interface FanOutResult {
  deliveries: number;
  lost: number;
  duplicates: number;
  reordered: number;
  p50: number;
  p99: number;
  sendP50: number;
  sendP99: number;
}

/**
 * Opens the subscribers (in a child process), sends `rate` messages a second for FANOUT_S
 * seconds from this process, and has every delivery checked.
 */
async function fanOut(options: FanOutOptions): Promise<FanOutResult> {
  const child = fork(join(here, 'fleet-child.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const reply = <T>(): Promise<T> =>
    new Promise((resolve, reject) => {
      child.once('message', (m: T & { error?: string }) =>
        m.error ? reject(new Error(m.error)) : resolve(m),
      );
      child.once('exit', (code) => reject(new Error(`subscriber process exited with ${code}`)));
    });
  try {
    const total = options.rate * FANOUT_S;
    const opening = performance.now();
    child.send({
      open: {
        port: options.port,
        path: options.path,
        headers: options.headers,
        count: options.subscribers,
        concurrency: 50,
        readyMarker: options.readyMarker,
        messages: total,
      },
    });
    await reply<{ ready: true }>();
    console.log(
      `  ${options.subscribers} subscribers open on ${options.path} in ${round(performance.now() - opening, 0)} ms`,
    );
    const interval = 1000 / options.rate;
    const sendLatencies: number[] = [];
    const started = performance.now();
    const sends: Promise<unknown>[] = [];
    for (let n = 0; n < total; n++) {
      const due = started + n * interval;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const t = performance.now();
      sends.push(
        options
          .publish({ content: `t=${wallClock()};n=${n}` })
          .then(() => sendLatencies.push(performance.now() - t)),
      );
    }
    await Promise.all(sends);
    child.send({ finish: { sent: total } });
    const { summary } = await reply<{ summary: Omit<FanOutResult, 'sendP50' | 'sendP99'> }>();
    console.log(`  ${JSON.stringify(summary)}`);
    return { ...summary, sendP50: percentile(sendLatencies, 50), sendP99: percentile(sendLatencies, 99) };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * A closed-loop load; with `server`, also the CPU time per request of that process and of the
 * local PostgreSQL processes (µs, from /proc; undefined where it cannot be read).
 */
async function load(port: number, build: (i: number) => Buffer, durationMs: number, server?: ChildProcess) {
  const before = { server: server?.pid && processCpuMs(server.pid), postgres: postgresCpuMs() };
  const run = await runLoad({
    port,
    connections: CONNECTIONS,
    durationMs,
    maxRequests: 1_000_000,
    request: build,
  });
  const perRequest = (start: number | undefined, end: number | undefined) =>
    start === undefined || end === undefined || run.requests === 0
      ? undefined
      : Math.round(((end - start) * 1000) / run.requests);
  return {
    ...run,
    serverCpuUs: perRequest(before.server, server?.pid ? processCpuMs(server.pid) : undefined),
    postgresCpuUs: perRequest(before.postgres, postgresCpuMs()),
  };
}

const agent = new Agent({ keepAlive: true, maxSockets: 8 });

function postJson(port: number, path: string, body: unknown, key?: string): Promise<any> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(payload),
          ...(key ? { 'X-Private-Key': key } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => {
          if ((res.statusCode ?? 500) >= 400)
            reject(new Error(`${path} answered ${res.statusCode}: ${text}`));
          else resolve(text ? JSON.parse(text) : undefined);
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Opens an SSE stream on `space` that reads and drops everything; resolves once it is live. */
function openStream(
  port: number,
  space: { spaceId: string; ownerPrivateKey: string },
): Promise<ClientRequest> {
  return new Promise((resolve, reject) => {
    const req = get(
      {
        host: '127.0.0.1',
        port,
        path: `/hub/space/${space.spaceId}/messages/stream`,
        headers: { 'X-Private-Key': space.ownerPrivateKey, Accept: 'text/event-stream' },
      },
      (res) => {
        if (res.statusCode !== 200) reject(new Error(`stream answered ${res.statusCode}`));
        res.setEncoding('utf8');
        let live = false;
        res.on('data', (chunk: string) => {
          if (!live && chunk.includes('event: context')) {
            live = true;
            resolve(req);
          }
        });
        res.on('error', () => {});
      },
    );
    req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
  });
}

async function createSpace(
  port: number,
  name: string,
): Promise<{ spaceId: string; ownerPrivateKey: string }> {
  return postJson(port, '/hub/space', { name, description: 'benchmark' });
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
