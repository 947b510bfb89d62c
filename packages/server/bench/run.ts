// `pnpm bench`: Convene's message path against bare baselines, side by side in one run.
// Loopback only; every loop is bounded in count and time. See README "Benchmarks".
//
//   pnpm bench [--quick] [--conns 16,50,200] [--only requests,nodes,pglite,durable,fanout] [--cpu-prof]
//              [--compare <another checkout>] [--streams-per-process 2500]
//
// Every rule stays in force: the rate limit is raised by configuration (closed-loop senders far
// exceed any human limit) but still counted on every request, idempotency and the HTTP policy
// run, and the servers log at the default level (to /dev/null, as to a file in production).
import { type ChildProcess, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { Agent, type ClientRequest, get, request } from 'node:http';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { limits } from '@convene/contract';
import { createPostgresTestDatabase } from '@convene/core/testing';
import { postgresCpuMs, processCpuMs } from './cpu';
import { httpRequest, type LoadResult, percentile, runLoad } from './http-load';
import {
  checkpoint,
  ensureDurablePostgres,
  ensurePostgres,
  forkBench,
  settledMemoryOf,
  start,
  stop,
} from './processes';
import { machineClock } from './sse-fleet';
import './unheard-errors';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '../../..');
const resultsDir = join(repo, 'bench/results');

const DEFAULT_CONNS = '16,50,200';
const DEFAULT_STREAMS_PER_PROCESS = '2500';
const ALL_SECTIONS = 'requests,nodes,pglite,durable,fanout';
const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    conns: { type: 'string', default: DEFAULT_CONNS },
    only: { type: 'string', default: ALL_SECTIONS },
    'cpu-prof': { type: 'boolean', default: false },
    compare: { type: 'string' },
    'streams-per-process': { type: 'string', default: DEFAULT_STREAMS_PER_PROCESS },
  },
});
const CONNS = args.conns
  .split(',')
  .map(Number)
  .filter((n) => Number.isInteger(n) && n > 0);
const SECTIONS = new Set(args.only.split(','));
/**
 * Only a full run (every section at the default connection counts, not `--quick`) replaces
 * `latest.json`, the reference run the README's figures come from; a partial run is kept
 * under its time only.
 */
const FULL_RUN =
  !args.quick &&
  !args.compare &&
  args.conns === DEFAULT_CONNS &&
  args['streams-per-process'] === DEFAULT_STREAMS_PER_PROCESS &&
  ALL_SECTIONS.split(',').every((s) => SECTIONS.has(s));
/**
 * `--compare <dir>`: another checkout of Convene (a `git worktree` of an earlier commit, its
 * packages installed), whose server runs beside this one in the requests and fan-out sections,
 * in the same alternating slices, each on a database of its own. Two builds measured minutes
 * apart on a shared VM compare two machines; side by side they compare two builds.
 */
const COMPARE =
  args.compare === undefined
    ? undefined
    : // Relative to where `pnpm bench` was typed (pnpm runs the bench in packages/server).
      comparedCheckout(resolve(process.env.INIT_CWD ?? process.cwd(), args.compare));

function comparedCheckout(dir: string): { bench: string; label: string } {
  const bench = join(dir, 'packages/server/bench');
  if (!existsSync(join(bench, 'convene-node.ts')))
    throw new Error(`--compare ${dir}: no packages/server/bench/convene-node.ts there (a Convene checkout?)`);
  if (!existsSync(join(dir, 'packages/server/node_modules')))
    throw new Error(`--compare ${dir}: its packages are not installed (pnpm install there first)`);
  const git = (...a: string[]) => execFileSync('git', ['-C', dir, ...a], { encoding: 'utf8' }).trim();
  let label = dir;
  try {
    label =
      git('rev-parse', '--short', 'HEAD') + (git('status', '--porcelain', '--untracked-files=no') ? '+' : '');
  } catch {
    // Not a git checkout: named by its folder.
  }
  return { bench, label };
}
const LOAD_MS = args.quick ? 4_000 : 10_000;
const WARMUP_MS = args.quick ? 2_000 : 3_000;
/** The connections of the two-node, profile and information rows. */
const MAIN_CONNS = 50;
const PGLITE_CONNS = 16;
const FANOUT_S = args.quick ? 5 : 10;

const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;
const CONTENT = 'x'.repeat(180);

/** A Convene node as the benchmark runs it: every rule on, the rate limit raised, default logging. */
const conveneEnv = (databaseUrl: string | undefined, extra: Record<string, string> = {}) => ({
  ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  RATE_LIMIT_MAX: '1000000000',
  SECRET: 'bench-secret-0123456789abcdef0123456789abcdef0123456789abcdef0123',
  ...extra,
});

interface RequestRow {
  section: string;
  scenario: string;
  connections: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  statuses: Record<number, number>;
  /** CPU per request, µs: the server process(es), and every local PostgreSQL process. */
  serverCpuUs?: number | undefined;
  postgresCpuUs?: number | undefined;
}

interface FanOutRow {
  scenario: string;
  subscribers: number;
  rate: number;
  openMs: number;
  deliveries: number;
  lost: number;
  duplicated: number;
  reordered: number;
  p50: number;
  p99: number;
  /** The sender's latency to the parsed answer. */
  sendP50: number;
  sendP99: number;
  /** The sender's latency to the last byte of the answer, before parsing it. */
  sendLastByteP50: number;
  /** Server memory grown by opening the subscribers, settled, MiB per 1,000 streams: resident set. */
  rssPer1000MiB?: number | undefined;
  /** The same, held by JavaScript: live heap and Buffers. */
  jsPer1000MiB?: number | undefined;
  /**
   * CPU time per delivery (µs) while the target's messages went out: of its server, of its
   * subscribers' process (reading and parsing), and of PostgreSQL. Undefined off Linux.
   */
  serverCpuUsPerDelivery?: number | undefined;
  subscriberCpuUsPerDelivery?: number | undefined;
  postgresCpuUsPerDelivery?: number | undefined;
}

interface Target {
  target: string;
  value: number;
  limit: string;
  met: boolean;
}

const requestRows: RequestRow[] = [];
const fanOutRows: FanOutRow[] = [];
const targets: Target[] = [];
const profiles: { file: string; top: { fn: string; selfPct: number }[] }[] = [];

async function main() {
  const children: ChildProcess[] = [];
  const cleanups: (() => Promise<void> | void)[] = [];
  try {
    const needsPostgres = ['requests', 'nodes', 'fanout'].some((s) => SECTIONS.has(s)) || args['cpu-prof'];
    const serverUrl = needsPostgres ? await ensurePostgres() : '';
    /**
     * Each PostgreSQL section runs on a database of its own, created for it and dropped after it,
     * after a checkpoint: the rows, dead tuples and dirty pages a section leaves (the request
     * sections insert messages by the tens of thousands) are never vacuumed or flushed during the next one.
     */
    const section = async (
      name: string,
      run: (databaseUrl: string, comparedUrl: string | undefined) => Promise<void>,
      { server = serverUrl, compared = false } = {},
    ) => {
      const created = await createPostgresTestDatabase(server);
      cleanups.push(created.drop);
      // The compared build's own database on the same server (see COMPARE), made before the checkpoint too.
      const other = compared && COMPARE ? await createPostgresTestDatabase(server) : undefined;
      if (other) cleanups.push(other.drop);
      await checkpoint(server);
      console.log(`PostgreSQL (${name}): ${created.url.replace(/\/\/[^@]*@/, '//')}`);
      await run(created.url, other?.url);
      await created.drop();
      await other?.drop();
    };
    if (SECTIONS.has('requests'))
      await section('requests', (url, compared) => requestsSection(url, compared, children), {
        compared: true,
      });
    if (SECTIONS.has('nodes')) await section('nodes', (url) => nodesSection(url, children));
    if (SECTIONS.has('pglite')) await pgliteSection(children, cleanups);
    if (SECTIONS.has('durable'))
      await section('durable', (url) => durableSection(url, children), {
        server: await ensureDurablePostgres(),
      });
    if (SECTIONS.has('fanout'))
      await section('fan-out', (url, compared) => fanOutSection(url, compared, children), { compared: true });
    if (args['cpu-prof']) await section('profile', (url) => profileSection(url, children));
    report();
  } catch (error) {
    // What the sections before it measured is kept (never as latest.json), then the run fails.
    report(error);
    throw error;
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => {});
  }
}

/** sendMessage against the bare route at each connection count, both servers up side by side. */
async function requestsSection(
  databaseUrl: string,
  comparedUrl: string | undefined,
  children: ChildProcess[],
) {
  const maxConns = Math.max(...CONNS, MAIN_CONNS);
  const bare = await startBare({ DATABASE_URL: databaseUrl }, maxConns, children);
  const convene = await start('convene-node.ts', conveneEnv(databaseUrl), children, { quiet: true });
  const spaces = await createSpaces(convene.port, maxConns, 'bench');
  const compared = comparedUrl && (await startCompared(comparedUrl, children));
  const comparedSpaces = compared && (await createSpaces(compared.port, maxConns, 'bench'));
  for (const conns of CONNS) {
    const [bareRun, sendRun, comparedRun] = await sideBySide('requests', conns, [
      { scenario: 'bare route', port: bare.port, build: bare.request, servers: bare.child },
      { scenario: 'sendMessage', port: convene.port, build: sendTo(spaces), servers: convene.child },
      ...(compared && comparedSpaces
        ? [
            {
              scenario: `sendMessage [${COMPARE!.label}]`,
              port: compared.port,
              build: sendTo(comparedSpaces),
              servers: compared.child,
            },
          ]
        : []),
    ]);
    checkRequests(`${conns} connections, PostgreSQL`, sendRun!, bareRun!, 0.6, 1.5);
    if (comparedRun) compareRequests(`${conns} connections`, sendRun!, comparedRun);
  }
  if (compared) await stop(compared.child);
  // Information rows at MAIN_CONNS: what shares of the cost are.
  const info = (scenario: string, build: (i: number) => Buffer, child = convene.child, port = convene.port) =>
    measured('information', scenario, MAIN_CONNS, port, build, child, LOAD_MS / 2);
  await info('sendMessage, every connection on one space', () => sendTo(spaces)(0));
  const streams = await Promise.all(spaces.slice(0, MAIN_CONNS).map((s) => openStream(convene.port, s)));
  await info('sendMessage, a stream open on every space', sendTo(spaces));
  for (const stream of streams) stream.destroy();
  // The cheapest route the rate limit counts (the health probe is counted by none since session 38).
  await info('GET /.well-known/deprecation-policy (the HTTP policy floor)', () =>
    httpRequest('GET', '/.well-known/deprecation-policy', {}),
  );
  await stop(convene.child);
  await stop(bare.child);
  const core = await start('core-route.ts', { DATABASE_URL: databaseUrl }, children);
  const coreSpaces = await createSpaces(core.port, MAIN_CONNS, 'core');
  await info('the sendMessage use case in a bare route', sendTo(coreSpaces), core.child, core.port);
  await stop(core.child);
}

/** Two nodes on one PostgreSQL, the connections spread over both, beside one node. */
async function nodesSection(databaseUrl: string, children: ChildProcess[]) {
  const bare = await startBare({ DATABASE_URL: databaseUrl }, MAIN_CONNS, children);
  const one = await start('convene-node.ts', conveneEnv(databaseUrl), children, { quiet: true });
  const spaces = await createSpaces(one.port, MAIN_CONNS, 'nodes');
  const two = await start(
    'convene-node.ts',
    conveneEnv(databaseUrl, { PUBLIC_URL: 'http://node-2.invalid' }),
    children,
    { quiet: true },
  );
  const [bareRun, oneRun, both] = (await sideBySide('nodes', MAIN_CONNS, [
    { scenario: 'bare route', port: bare.port, build: bare.request, servers: bare.child },
    { scenario: 'sendMessage, one node', port: one.port, build: sendTo(spaces), servers: one.child },
    {
      scenario: 'sendMessage, two nodes (half the connections each)',
      port: one.port,
      build: sendTo(spaces),
      servers: [one.child, two.child],
      portOf: (i) => (i % 2 === 0 ? one.port : two.port),
    },
  ])) as [RequestRow, RequestRow, RequestRow];
  await stop(bare.child);
  targets.push({
    target: `two nodes vs one node, ${MAIN_CONNS} connections (measured, no target on 2 cores)`,
    value: round(both.rps / oneRun.rps, 2),
    limit: 'report',
    met: both.errors === 0,
  });
  checkRequests(`${MAIN_CONNS} connections over two nodes`, both, bareRun, 0, Number.POSITIVE_INFINITY);
  await stop(two.child);
  await stop(one.child);
}

/**
 * The other sections run on a PostgreSQL that never waits for its disk (tests' settings). Here
 * every commit is flushed, as with PostgreSQL's defaults: sendMessage and the bare route at
 * MAIN_CONNS side by side, and at one connection `GET /.well-known/deprecation-policy`, whose only
 * database work is its rate-limit count (bookkeeping, committed without waiting for the disk: see
 * decisions.md). Until session 38 that row was `GET /api/health`, which no count touches since.
 */
async function durableSection(databaseUrl: string, children: ChildProcess[]) {
  const bare = await startBare({ DATABASE_URL: databaseUrl }, MAIN_CONNS, children);
  const convene = await start('convene-node.ts', conveneEnv(databaseUrl), children, { quiet: true });
  const spaces = await createSpaces(convene.port, MAIN_CONNS, 'durable');
  const [bareRun, sendRun] = await sideBySide('durable', MAIN_CONNS, [
    { scenario: 'bare route, commits flushed', port: bare.port, build: bare.request, servers: bare.child },
    {
      scenario: 'sendMessage, commits flushed',
      port: convene.port,
      build: sendTo(spaces),
      servers: convene.child,
    },
  ]);
  checkRequests(
    `${MAIN_CONNS} connections, PostgreSQL flushing every commit`,
    sendRun!,
    bareRun!,
    0,
    Number.POSITIVE_INFINITY,
  );
  await sideBySide(
    'durable',
    1,
    [
      { scenario: 'bare route, commits flushed', port: bare.port, build: bare.request, servers: bare.child },
      {
        scenario: 'sendMessage, commits flushed',
        port: convene.port,
        build: sendTo(spaces),
        servers: convene.child,
      },
      {
        scenario: 'GET /.well-known/deprecation-policy, commits flushed',
        port: convene.port,
        build: () => httpRequest('GET', '/.well-known/deprecation-policy', {}),
        servers: convene.child,
      },
    ],
    LOAD_MS / 2,
  );
  await stop(convene.child);
  await stop(bare.child);
}

/** Embedded PGlite: Convene's default database, against a bare route on PGlite. */
async function pgliteSection(children: ChildProcess[], cleanups: (() => void)[]) {
  const dirs = ['bare', 'convene'].map((name) => mkdtempSync(join(tmpdir(), `convene-bench-${name}-`)));
  cleanups.push(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const bare = await startBare({ DATABASE_URL: '', BENCH_DATA_DIR: dirs[0]! }, PGLITE_CONNS, children);
  const convene = await start(
    'convene-node.ts',
    conveneEnv(undefined, { DATABASE_URL: '', DATA_DIR: dirs[1]! }),
    children,
    { quiet: true },
  );
  const spaces = await createSpaces(convene.port, PGLITE_CONNS, 'pglite');
  const [bareRun, sendRun] = (await sideBySide('pglite', PGLITE_CONNS, [
    { scenario: 'bare route on PGlite', port: bare.port, build: bare.request, servers: bare.child },
    { scenario: 'sendMessage on PGlite', port: convene.port, build: sendTo(spaces), servers: convene.child },
  ])) as [RequestRow, RequestRow];
  await stop(bare.child);
  await stop(convene.child);
  // PGlite runs inside the server process: no PostgreSQL process's CPU is theirs.
  for (const row of [bareRun, sendRun]) row.postgresCpuUs = undefined;
  checkRequests(`${PGLITE_CONNS} connections, PGlite`, sendRun, bareRun, 0.5, Number.POSITIVE_INFINITY);
}

/**
 * Fan-out to many streams against a bare SSE broadcaster, and the memory streams hold. Both servers
 * are up together with their subscribers open, and the messages of each rate go to them in
 * alternating slices (see fanOutSideBySide), so that a stall of the machine lands on both.
 */
async function fanOutSection(databaseUrl: string, comparedUrl: string | undefined, children: ChildProcess[]) {
  // --expose-gc: the memory of open streams is measured after a full collection (settledMemoryOf).
  const broadcaster = await start('bare-broadcaster.ts', {}, children, { execArgv: ['--expose-gc'] });
  const convene = await start('convene-node.ts', conveneEnv(databaseUrl), children, {
    quiet: true,
    execArgv: ['--expose-gc'],
  });
  const compared = comparedUrl && (await startCompared(comparedUrl, children, ['--expose-gc']));
  const bareFan = (subscribers: number, rate: number): FanOutTarget => ({
    scenario: `bare broadcaster ${subscribers} × ${rate}/s`,
    port: broadcaster.port,
    subscribers,
    path: '/sse',
    headers: {},
    readyMarker: ': hello',
    publish: (body, onLastByte) => postJson(broadcaster.port, '/publish', body, undefined, onLastByte),
    server: broadcaster.child,
  });
  /**
   * A space whose `subscribers` streams listen. Up to the cap of participants, each listener is a
   * participant of its own (the owner, who sends, listens too), as in a space of that many agents:
   * every send's reply then carries them all (the context bundle). Beyond it, as many streams per
   * participant as one key may hold. With `members`, the space has that many participants, of
   * whom the first `subscribers` listen.
   */
  const conveneFan = async (
    subscribers: number,
    rate: number,
    members = subscribers,
    server: FanServer = convene,
  ): Promise<FanOutTarget> => {
    const [space] = await createSpaces(server.port, 1, `fan-out ${subscribers}`);
    const onePerParticipant = subscribers <= limits.participantsPerSpace;
    const keys = onePerParticipant
      ? [space!.ownerPrivateKey, ...(await joinParticipants(server.port, space!, members - 1))].slice(
          0,
          subscribers,
        )
      : await joinParticipants(server.port, space!, Math.ceil(subscribers / STREAMS_PER_KEY));
    return {
      scenario: `Convene ${subscribers}${members === subscribers ? '' : ` of ${members} participants`} × ${rate}/s${server.label ? ` [${server.label}]` : ''}`,
      port: server.port,
      subscribers,
      path: `/hub/space/${space!.spaceId}/messages/stream`,
      headers: {},
      keys: { values: keys, perKey: onePerParticipant ? 1 : STREAMS_PER_KEY },
      readyMarker: 'event: context',
      publish: (body, onLastByte) =>
        postJson(
          server.port,
          `/hub/space/${space!.spaceId}/messages`,
          body,
          space!.ownerPrivateKey,
          onLastByte,
        ),
      server: server.child,
    };
  };
  const comparedServer = compared && { ...compared, label: COMPARE!.label };
  // The 10-stream targets open before the 1,000: a server's first streams also load and compile
  // the stream path, which is not memory that 1,000 streams hold. The second listens in a space of
  // 1,000 participants, whose every send's answer is as large as the 1,000 listeners' one (300 kB).
  // The compared build's server hosts the same, opened in the same order, so that both hold the
  // same spaces and participants when their 5,000 streams open.
  const at20 = async (server?: FanServer) => [
    await conveneFan(10, 20, 10, server),
    await conveneFan(10, 20, 1000, server),
    await conveneFan(1000, 20, 1000, server),
  ];
  const [convene10, convene10of1000, convene1000, bare1000, , , compared1000] = await fanOutSideBySide(20, [
    ...(await at20()),
    bareFan(1000, 20),
    ...(comparedServer ? await at20(comparedServer) : []),
  ]);
  const [convene5000, bare5000, compared5000] = await fanOutSideBySide(10, [
    await conveneFan(5000, 10),
    bareFan(5000, 10),
    ...(comparedServer ? [await conveneFan(5000, 10, 5000, comparedServer)] : []),
  ]);
  await stop(broadcaster.child);
  await stop(convene.child);
  if (compared) await stop(compared.child);
  if (compared1000 && compared5000) {
    compareFanOut(convene1000!, compared1000);
    compareFanOut(convene5000!, compared5000);
  }

  for (const [c, b] of [
    [convene1000!, bare1000!],
    [convene5000!, bare5000!],
  ] as const) {
    const faults = c.lost + c.duplicated + c.reordered;
    targets.push(
      {
        target: `${c.scenario}: lost + duplicated + reordered`,
        value: faults,
        limit: '= 0',
        met: faults === 0,
      },
      {
        target: `${c.scenario}: delivery p50 / bare`,
        value: round(c.p50 / b.p50, 2),
        limit: '≤ 1.3',
        met: c.p50 / b.p50 <= 1.3,
      },
      {
        target: `${c.scenario}: delivery p99 / bare`,
        value: round(c.p99 / b.p99, 2),
        limit: '≤ 1.5',
        met: c.p99 / b.p99 <= 1.5,
      },
    );
  }
  // Each size: the 1,000 streams are as many participants, whose first contexts are 300 kB each.
  for (const c of [convene1000!, convene5000!]) {
    const rss = c.rssPer1000MiB!;
    // A resident set that fell while the streams opened (the allocator gave back a peak of
    // before, after the probes had settled) measures nothing: void, never met.
    if (rss < 0)
      console.warn(
        `  ${c.scenario}: the resident set fell by ${round(-rss, 1)} MiB per 1,000 while the streams opened; ` +
          `that measure is void (what JavaScript holds: ${round(c.jsPer1000MiB ?? Number.NaN, 1)} MiB per 1,000)`,
      );
    targets.push({
      target: `${c.scenario}: server memory per 1,000 open streams, MiB (resident)`,
      value: round(rss, 1),
      limit: '≤ 25',
      met: rss >= 0 && rss <= 25,
    });
  }
  // Each listener a participant: the 1,000 listeners' answers carry 1,000 participants, the 10's
  // carry 10. Beside it, what the listeners cost alone (both spaces of 1,000 participants), and
  // what the answer's size costs, to the last byte and parsed.
  const ratio = (a: number, b: number) => round(a / b, 2);
  targets.push(
    {
      target: 'sendMessage p50 with 1,000 listeners / with 10',
      value: ratio(convene1000!.sendP50, convene10!.sendP50),
      limit: '≤ 1.2',
      met: convene1000!.sendP50 / convene10!.sendP50 <= 1.2,
    },
    {
      target: 'the same, to the last byte of the answer (before parsing it)',
      value: ratio(convene1000!.sendLastByteP50, convene10!.sendLastByteP50),
      limit: 'report',
      met: true,
    },
    {
      target: 'sendMessage p50, 1,000 listeners / 10, both in a space of 1,000 participants',
      value: ratio(convene1000!.sendP50, convene10of1000!.sendP50),
      limit: 'report',
      met: true,
    },
  );
}

/** A CPU profile of one node under MAIN_CONNS senders, and where its time went. */
async function profileSection(databaseUrl: string, children: ChildProcess[]) {
  const dir = join(resultsDir, 'profiles');
  // Every thread of the node writes a profile (tsx's loader runs in a worker): each its own file.
  const threads = mkdtempSync(join(tmpdir(), 'convene-cpu-prof-'));
  const node = await start('convene-node.ts', conveneEnv(databaseUrl), children, {
    quiet: true,
    execArgv: ['--cpu-prof', '--cpu-prof-dir', threads],
  });
  const spaces = await createSpaces(node.port, MAIN_CONNS, 'profile');
  await measured(
    'profile',
    'sendMessage under --cpu-prof',
    MAIN_CONNS,
    node.port,
    sendTo(spaces),
    node.child,
  );
  await stop(node.child);
  // The main thread's is the one with the most samples.
  const [main] = readdirSync(threads)
    .map((name) => join(threads, name))
    .sort((a, b) => statSync(b).size - statSync(a).size);
  if (!main) throw new Error('the node wrote no CPU profile');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `sendMessage-${MAIN_CONNS}-${stamp()}.cpuprofile`);
  renameSync(main, file);
  rmSync(threads, { recursive: true, force: true });
  profiles.push({ file: relative(repo, file), top: topFunctions(file, 15) });
}

// ---------------------------------------------------------------------------------------------

/** One measured closed-loop run (after a warm-up), recorded as a row. */
/** One scenario of a side-by-side measurement: where its connections go and what they send. */
interface Scenario {
  scenario: string;
  port: number;
  build: (i: number) => Buffer;
  servers: ChildProcess | ChildProcess[];
  portOf?: (i: number) => number;
}

/** Slices each side-by-side measurement is cut into, alternating between its scenarios. */
const SLICES = 10;

/**
 * Measures scenarios side by side: after a warm-up of each, their runs alternate in SLICES slices
 * (A B, B A, A B… with two, rotated with more), so that every scenario sees the same machine. On
 * a shared VM the CPU left to a run changes by half within minutes; back-to-back runs compared one
 * such minute with another.
 * Each row sums its slices: requests per second, latency percentiles over every request, CPU per
 * request of its server process(es) and of PostgreSQL while it ran.
 */
async function sideBySide(
  section: string,
  connections: number,
  scenarios: Scenario[],
  durationMs = LOAD_MS,
): Promise<RequestRow[]> {
  const loadOf = (s: Scenario, ms: number) =>
    runLoad({
      port: s.port,
      connections,
      maxRequests: 5_000_000,
      request: s.build,
      durationMs: ms,
      ...(s.portOf ? { portOf: s.portOf } : {}),
    });
  const totals = scenarios.map(() => ({
    requests: 0,
    errors: 0,
    elapsedMs: 0,
    latencies: [] as number[],
    statuses: {} as Record<number, number>,
    serverMs: 0,
    postgresMs: 0 as number | undefined,
  }));
  for (const s of scenarios) await loadOf(s, WARMUP_MS);
  const slices = scenarios.length > 1 ? SLICES : 1;
  for (let slice = 0; slice < slices; slice++) {
    // Rotated, so each scenario takes each place in turn (A B, B A with two; A B C, B C A, C A B
    // with three): with the order reversed every other slice, the middle one of three was always
    // in the middle.
    const order = scenarios.map((_, i) => (i + slice) % scenarios.length);
    for (const i of order) {
      const s = scenarios[i]!;
      const total = totals[i]!;
      const servers = Array.isArray(s.servers) ? s.servers : [s.servers];
      const cpuOf = () =>
        servers.reduce((sum, c) => sum + (c.pid ? (processCpuMs(c.pid) ?? Number.NaN) : Number.NaN), 0);
      const before = { server: cpuOf(), postgres: postgresCpuMs() };
      const run: LoadResult = await loadOf(s, durationMs / slices);
      const after = { server: cpuOf(), postgres: postgresCpuMs() };
      total.requests += run.requests;
      total.errors += run.errors;
      total.elapsedMs += run.elapsedMs;
      for (const latency of run.latencies) total.latencies.push(latency);
      for (const [status, n] of Object.entries(run.statuses))
        total.statuses[Number(status)] = (total.statuses[Number(status)] ?? 0) + n;
      total.serverMs += after.server - before.server;
      total.postgresMs =
        total.postgresMs === undefined || before.postgres === undefined || after.postgres === undefined
          ? undefined
          : total.postgresMs + after.postgres - before.postgres;
    }
  }
  return scenarios.map((s, i) => {
    const total = totals[i]!;
    const perRequest = (ms: number | undefined) =>
      ms === undefined || Number.isNaN(ms) || total.requests === 0
        ? undefined
        : Math.round((ms * 1000) / total.requests);
    const row: RequestRow = {
      section,
      scenario: s.scenario,
      connections,
      rps: total.requests / (total.elapsedMs / 1000),
      p50: percentile(total.latencies, 50),
      p99: percentile(total.latencies, 99),
      errors: total.errors,
      statuses: total.statuses,
      serverCpuUs: perRequest(total.serverMs),
      postgresCpuUs: perRequest(total.postgresMs),
    };
    requestRows.push(row);
    console.log(
      `  ${s.scenario}, ${connections} connections: ${round(row.rps, 0)} req/s, p99 ${round(row.p99, 2)} ms, statuses ${JSON.stringify(total.statuses)}`,
    );
    return row;
  });
}

/** One scenario on its own (the information rows: shares of the cost, no ratio). */
async function measured(
  section: string,
  scenario: string,
  connections: number,
  port: number,
  build: (i: number) => Buffer,
  servers: ChildProcess | ChildProcess[],
  durationMs = LOAD_MS,
): Promise<RequestRow> {
  const [row] = await sideBySide(section, connections, [{ scenario, port, build, servers }], durationMs);
  return row!;
}

function checkRequests(label: string, run: RequestRow, bare: RequestRow, minRps: number, maxP99: number) {
  const rps = run.rps / bare.rps;
  const p99 = run.p99 / bare.p99;
  targets.push({
    target: `sendMessage req/s / bare, ${label}`,
    value: round(rps, 2),
    limit: minRps > 0 ? `≥ ${minRps}` : 'report',
    met: rps >= minRps && run.errors === 0,
  });
  targets.push({
    target: `sendMessage p99 / bare, ${label}`,
    value: round(p99, 2),
    limit: Number.isFinite(maxP99) ? `≤ ${maxP99}` : 'report',
    met: p99 <= maxP99 && run.errors === 0,
  });
}

/** The compared build's server (`--compare`), on a database of its own. */
function startCompared(databaseUrl: string, children: ChildProcess[], execArgv: string[] = []) {
  return start('convene-node.ts', conveneEnv(databaseUrl), children, {
    quiet: true,
    execArgv,
    from: COMPARE!.bench,
  });
}

/**
 * This build against the compared one (`--compare`): each figure's ratio, this / compared,
 * reported as a target named `<what>, this build / <commit><where>`; met when both runs were clean.
 */
function pushComparisons(
  where: string,
  figures: readonly (readonly [what: string, ours: number | undefined, theirs: number | undefined])[],
  clean: boolean,
) {
  for (const [what, ours, theirs] of figures)
    targets.push({
      target: `${what}, this build / ${COMPARE!.label}${where}`,
      value: ours === undefined || theirs === undefined ? Number.NaN : round(ours / theirs, 2),
      limit: 'report',
      met: clean,
    });
}

function compareRequests(label: string, run: RequestRow, compared: RequestRow) {
  pushComparisons(
    `, ${label}`,
    [
      ['sendMessage req/s', run.rps, compared.rps],
      ['sendMessage p99', run.p99, compared.p99],
    ],
    run.errors === 0 && compared.errors === 0,
  );
}

function compareFanOut(row: FanOutRow, compared: FanOutRow) {
  const faults = (r: FanOutRow) => r.lost + r.duplicated + r.reordered;
  pushComparisons(
    '',
    [
      [`${row.scenario}: delivery p50`, row.p50, compared.p50],
      [`${row.scenario}: delivery p99`, row.p99, compared.p99],
      [`${row.scenario}: sender p50`, row.sendP50, compared.sendP50],
      [`${row.scenario}: memory per 1,000 streams (resident)`, row.rssPer1000MiB, compared.rssPer1000MiB],
      [`${row.scenario}: memory per 1,000 streams (JavaScript)`, row.jsPer1000MiB, compared.jsPer1000MiB],
    ],
    faults(row) === 0 && faults(compared) === 0,
  );
}

/** The bare route, with `count` keys registered; its request for connection i uses key i. */
async function startBare(env: Record<string, string>, count: number, children: ChildProcess[]) {
  const bare = await start('bare-route.ts', env, children);
  const keys = Array.from({ length: count }, () => randomBytes(32).toString('hex'));
  await postJson(bare.port, '/keys', { keys });
  const request = (i: number) =>
    httpRequest('POST', '/bare', { 'X-Key': keys[i % count]! }, JSON.stringify({ content: CONTENT }));
  return { ...bare, request };
}

type Space = { spaceId: string; ownerPrivateKey: string };

const sendTo = (spaces: Space[]) => (i: number) => {
  const space = spaces[i % spaces.length]!;
  return httpRequest(
    'POST',
    `/hub/space/${space.spaceId}/messages`,
    { 'X-Private-Key': space.ownerPrivateKey },
    JSON.stringify({ content: CONTENT }),
  );
};

async function createSpaces(port: number, count: number, name: string): Promise<Space[]> {
  const spaces: Space[] = [];
  for (let i = 0; i < count; i += 20)
    spaces.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(20, count - i) }, (_, j) =>
          postJson(port, '/hub/space', { name: `${name} ${i + j}`, description: 'benchmark' }),
        ),
      )),
    );
  return spaces;
}

/** Streams each fan-out participant holds: the server's cap for one key. */
const STREAMS_PER_KEY = 20;

/** `count` participants joined to a public space; their keys. */
async function joinParticipants(port: number, space: Space, count: number): Promise<string[]> {
  const keys: string[] = [];
  let invitation: { publicInvitationKey: string } | undefined;
  for (let i = 0; i < count; i += 20) {
    // An invitation admits 100 joins.
    if (i % 100 === 0)
      invitation = await postJson(port, `/hub/space/${space.spaceId}/invite`, {}, space.ownerPrivateKey);
    keys.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(20, count - i) }, (_, j) =>
          postJson(
            port,
            `/hub/space/${space.spaceId}/join`,
            { name: `listener ${i + j}`, role: 'listens', isHuman: false },
            invitation!.publicInvitationKey,
          ).then((joined: { participantPrivateKey: string }) => joined.participantPrivateKey),
        ),
      )),
    );
  }
  return keys;
}

/** A Convene server of the fan-out: this build's, or the compared one's (with its label). */
type FanServer = { port: number; child: ChildProcess; label?: string };

/** One side of a fan-out comparison: a server, the stream its subscribers open, how to publish. */
interface FanOutTarget {
  scenario: string;
  keys?: { values: string[]; perKey: number };
  port: number;
  subscribers: number;
  path: string;
  headers: Record<string, string>;
  readyMarker: string;
  publish: (body: { content: string }, onLastByte: () => void) => Promise<unknown>;
  server: ChildProcess;
}

/** A target's subscribers, open in processes of their own, and what its sender measured. */
interface OpenFleet {
  target: FanOutTarget;
  /** The subscriber processes, STREAMS_PER_SUBSCRIBER_PROCESS streams each at most. */
  children: ChildProcess[];
  openMs: number;
  rssPer1000MiB: number | undefined;
  jsPer1000MiB: number | undefined;
  /** Messages sent so far (each carries its number n). */
  sent: number;
  sendLatencies: number[];
  /** The same sends, to the last byte of their answers (before parsing them). */
  lastByteLatencies: number[];
  /** CPU time (ms) used during the target's own slices: server, subscribers, PostgreSQL. */
  cpuMs: { server: number; subscribers: number; postgres: number } | undefined;
}

/**
 * The most streams one subscriber process reads. One JavaScript thread reading 5,000 streams at
 * 10 messages a second needs a whole core for Convene's deliveries (21 µs of CPU each: a message
 * event is 300 bytes, the bare broadcaster's 80), and the queue it falls behind into is then
 * measured as delivery time. Subscribers are many clients, not one thread: a target's are spread
 * over processes of this many streams at most, the bare broadcaster's as Convene's.
 */
const STREAMS_PER_SUBSCRIBER_PROCESS = Number(args['streams-per-process']);
if (!(Number.isInteger(STREAMS_PER_SUBSCRIBER_PROCESS) && STREAMS_PER_SUBSCRIBER_PROCESS > 0))
  throw new Error(`--streams-per-process ${args['streams-per-process']}: a positive whole number`);

/** Slices of each rate's messages, alternating between the targets. */
const FANOUT_SLICES = 10;
/** A pause after each target's slice, so its last deliveries are in before the next one sends. */
const FANOUT_SLICE_GAP_MS = 300;

/**
 * Opens every target's subscribers (one child process each), then sends `rate` messages a second
 * for FANOUT_S seconds to each target, in FANOUT_SLICES slices taken in turn (A B, B A, … with
 * two; a rotation with more), and has every delivery checked.
 */
async function fanOutSideBySide(rate: number, targets: FanOutTarget[]): Promise<FanOutRow[]> {
  const total = rate * FANOUT_S;
  const perSlice = Math.ceil(total / FANOUT_SLICES);
  const fleets: OpenFleet[] = [];
  try {
    for (const target of targets) fleets.push(await openFleet(target, total));
    for (let slice = 0; slice < FANOUT_SLICES; slice++) {
      for (let j = 0; j < fleets.length; j++) {
        const fleet = fleets[(slice + j) % fleets.length]!;
        const before = cpuOfFleet(fleet);
        await sendSlice(fleet, rate, Math.min(perSlice, total - fleet.sent));
        await new Promise((r) => setTimeout(r, FANOUT_SLICE_GAP_MS));
        const after = cpuOfFleet(fleet);
        if (before && after && fleet.cpuMs) {
          fleet.cpuMs.server += after.server - before.server;
          fleet.cpuMs.subscribers += after.subscribers - before.subscribers;
          fleet.cpuMs.postgres += after.postgres - before.postgres;
        } else fleet.cpuMs = undefined;
      }
    }
    const rows: FanOutRow[] = [];
    for (const fleet of fleets) rows.push(await finishFleet(fleet, total, rate));
    return rows;
  } finally {
    for (const child of fleets.flatMap((f) => f.children)) if (child.exitCode === null) child.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** CPU time (ms) used so far by a fleet's server, its subscribers' processes and PostgreSQL. */
function cpuOfFleet({ target, children }: OpenFleet) {
  const server = processCpuMs(target.server.pid!);
  const each = children.map((child) => processCpuMs(child.pid!));
  const postgres = postgresCpuMs();
  if (server === undefined || each.includes(undefined) || postgres === undefined) return undefined;
  return { server, subscribers: each.reduce((sum: number, ms) => sum + ms!, 0), postgres };
}

/** The next message of a fleet's child process (its answer to the last command). */
function replyOf<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    child.once('message', (m: T & { error?: string }) => (m.error ? reject(new Error(m.error)) : resolve(m)));
    child.once('exit', (code) => reject(new Error(`subscriber process exited with ${code}`)));
  });
}

/** Forks a target's subscriber process and opens its streams; the server's memory before and after. */
async function openFleet(target: FanOutTarget, messages: number): Promise<OpenFleet> {
  const shares = Math.ceil(target.subscribers / STREAMS_PER_SUBSCRIBER_PROCESS);
  const share = Math.ceil(target.subscribers / shares);
  const children = Array.from({ length: shares }, () =>
    forkBench(join(here, 'fleet-child.ts'), {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  // Memory is reported per 1,000 streams: smaller targets are not measured (settling takes 20 s).
  const measured = target.subscribers >= 1000;
  const memoryBefore = measured ? await settledMemoryOf(target.server) : undefined;
  const opening = performance.now();
  await Promise.all(
    children.map((child, k) => {
      child.send({
        open: {
          port: target.port,
          path: target.path,
          headers: target.headers,
          first: k * share,
          count: Math.min(share, target.subscribers - k * share),
          // 50 connections opening at once, in all.
          concurrency: Math.ceil(50 / shares),
          readyMarker: target.readyMarker,
          messages,
          ...(target.keys ? { keys: target.keys } : {}),
        },
      });
      return replyOf<{ ready: true }>(child);
    }),
  );
  const openMs = performance.now() - opening;
  // Settled: once the first contexts are out of the server (the subscribers read 300 MB of them
  // with 1,000 participants) and the collector has given back what opening used.
  const memoryAfter =
    memoryBefore && (await settledMemoryOf(target.server, memoryBefore.external + 4 * 2 ** 20));
  const perThousand = (bytes: number | undefined) =>
    bytes === undefined ? undefined : bytes / 2 ** 20 / (target.subscribers / 1000);
  return {
    target,
    children,
    openMs,
    rssPer1000MiB: perThousand(memoryAfter && memoryAfter.rss - memoryBefore!.rss),
    jsPer1000MiB: perThousand(memoryAfter && memoryAfter.js - memoryBefore!.js),
    sent: 0,
    sendLatencies: [],
    lastByteLatencies: [],
    cpuMs: { server: 0, subscribers: 0, postgres: 0 },
  };
}

/** Sends `count` messages to a target at `rate` a second, each stamped with its send time and n. */
async function sendSlice(fleet: OpenFleet, rate: number, count: number): Promise<void> {
  const interval = 1000 / rate;
  const started = performance.now();
  const sends: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) {
    const wait = started + i * interval - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const t = performance.now();
    const n = fleet.sent++;
    sends.push(
      fleet.target
        .publish({ content: `t=${machineClock()};n=${n}` }, () =>
          fleet.lastByteLatencies.push(performance.now() - t),
        )
        .then(() => fleet.sendLatencies.push(performance.now() - t)),
    );
  }
  await Promise.all(sends);
}

/** Has the target's subscriber process check every delivery of the `sent` messages; its row. */
async function finishFleet(fleet: OpenFleet, sent: number, rate: number): Promise<FanOutRow> {
  const { target, children } = fleet;
  const summaries = await Promise.all(
    children.map((child) => {
      child.send({ finish: { sent } });
      return replyOf<{
        summary: {
          deliveries: number;
          lost: number;
          duplicates: number;
          reordered: number;
          latencies: number[];
        };
      }>(child).then((m) => m.summary);
    }),
  );
  const total = (field: 'deliveries' | 'lost' | 'duplicates' | 'reordered') =>
    summaries.reduce((sum, one) => sum + one[field], 0);
  const latencies = summaries.flatMap((one) => one.latencies);
  const summary = {
    subscribers: target.subscribers,
    processes: children.length,
    deliveries: total('deliveries'),
    lost: total('lost'),
    duplicates: total('duplicates'),
    reordered: total('reordered'),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
  const row: FanOutRow = {
    scenario: target.scenario,
    subscribers: target.subscribers,
    rate,
    openMs: fleet.openMs,
    deliveries: summary.deliveries,
    lost: summary.lost,
    duplicated: summary.duplicates,
    reordered: summary.reordered,
    p50: summary.p50,
    p99: summary.p99,
    sendP50: percentile(fleet.sendLatencies, 50),
    sendP99: percentile(fleet.sendLatencies, 99),
    sendLastByteP50: percentile(fleet.lastByteLatencies, 50),
    rssPer1000MiB: fleet.rssPer1000MiB,
    jsPer1000MiB: fleet.jsPer1000MiB,
    ...(fleet.cpuMs && {
      serverCpuUsPerDelivery: (fleet.cpuMs.server * 1000) / summary.deliveries,
      subscriberCpuUsPerDelivery: (fleet.cpuMs.subscribers * 1000) / summary.deliveries,
      postgresCpuUsPerDelivery: (fleet.cpuMs.postgres * 1000) / summary.deliveries,
    }),
  };
  fanOutRows.push(row);
  console.log(`  ${target.scenario}: ${JSON.stringify({ ...summary, openMs: round(fleet.openMs, 0) })}`);
  return row;
}

/** The functions with the most self time in a .cpuprofile, as shares of all samples. */
function topFunctions(file: string, count: number): { fn: string; selfPct: number }[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: {
      id: number;
      callFrame: { functionName: string; url: string; lineNumber: number };
      hitCount?: number;
    }[];
  };
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    total += hits;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url
      ? `${url.replace(/^.*node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?/, '').replace(/^file:\/\/.*\/packages\//, '')}:${lineNumber + 1}`
      : '';
    const key = `${functionName || '(anonymous)'} ${where}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + hits);
  }
  return [...byFunction]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([fn, hits]) => ({ fn, selfPct: round((100 * hits) / total, 1) }));
}

const started = new Date();
const stamp = () => started.toISOString().replace(/[:.]/g, '-');

/** Prints the tables and writes the results; `failure`, what ended a run that did not finish. */
function report(failure?: unknown) {
  if (requestRows.length) {
    console.log(
      `\nRequests (closed loop, keep-alive, ${LOAD_MS / 1000} s each after ${WARMUP_MS / 1000} s of warm-up)`,
    );
    console.table(
      requestRows.map((r) => ({
        section: r.section,
        scenario: r.scenario,
        conns: r.connections,
        'req/s': round(r.rps, 0),
        'p50 ms': round(r.p50, 2),
        'p99 ms': round(r.p99, 2),
        errors: r.errors,
        'server CPU µs/req': r.serverCpuUs ?? '-',
        'PostgreSQL CPU µs/req': r.postgresCpuUs ?? '-',
      })),
    );
  }
  if (fanOutRows.length) {
    console.log(`\nFan-out (${FANOUT_S} s of messages each)`);
    console.table(
      fanOutRows.map((r) => ({
        scenario: r.scenario,
        'open ms': round(r.openMs, 0),
        deliveries: r.deliveries,
        'lost/dup/reord': `${r.lost}/${r.duplicated}/${r.reordered}`,
        'p50 ms': round(r.p50),
        'p99 ms': round(r.p99),
        'send p50 ms': round(r.sendP50, 2),
        'send p99 ms': round(r.sendP99, 2),
        'send p50 ms, last byte': round(r.sendLastByteP50, 2),
        'MiB/1000 streams (RSS / JS)':
          r.rssPer1000MiB === undefined ? '-' : `${round(r.rssPer1000MiB, 1)} / ${round(r.jsPer1000MiB!, 1)}`,
        'CPU µs/delivery (server / subscribers / PG)':
          r.serverCpuUsPerDelivery === undefined
            ? '-'
            : `${round(r.serverCpuUsPerDelivery, 1)} / ${round(r.subscriberCpuUsPerDelivery!, 1)} / ${round(r.postgresCpuUsPerDelivery!, 1)}`,
      })),
    );
  }
  for (const profile of profiles) {
    console.log(`\nCPU profile ${profile.file} (open it in Chrome DevTools or speedscope); most self time:`);
    console.table(profile.top);
  }
  console.log('\nTargets');
  console.table(targets.map((t) => ({ ...t, met: t.met ? 'yes' : 'NO' })));
  mkdirSync(resultsDir, { recursive: true });
  const result = {
    date: started.toISOString(),
    machine: {
      cpus: cpus().length,
      cpu: cpus()[0]?.model,
      memoryGiB: round(totalmem() / 2 ** 30, 0),
      node: process.version,
    },
    options: {
      ...(COMPARE ? { compare: COMPARE.label } : {}),
      conns: CONNS,
      sections: [...SECTIONS],
      quick: args.quick,
      loadMs: LOAD_MS,
      warmupMs: WARMUP_MS,
      fanOutS: FANOUT_S,
    },
    ...(failure === undefined ? {} : { failed: String(failure) }),
    requests: requestRows,
    fanOut: fanOutRows,
    profiles,
    targets,
  };
  const text = `${JSON.stringify(result, null, 2)}\n`;
  const file = join(resultsDir, `${stamp()}.json`);
  writeFileSync(file, text);
  const latest = FULL_RUN && failure === undefined;
  if (latest) writeFileSync(join(resultsDir, 'latest.json'), text);
  console.log(
    `\nResults: ${relative(repo, file)} ${latest ? '(and bench/results/latest.json)' : failure === undefined ? '(a partial run: latest.json unchanged)' : '(a failed run: latest.json unchanged)'}`,
  );
}

const agent = new Agent({ keepAlive: true, maxSockets: 8 });

/** `error` with the request it ended, which its own message does not say. */
const namedError = (what: string, error: Error): Error =>
  new Error(`${what}: ${error.message}`, { cause: error });

/**
 * POSTs JSON and resolves to the answer, parsed; `onLastByte` runs when its last byte is in,
 * before the parse (a send's answer in a space of 1,000 participants is 300 kB to parse).
 */
function postJson(
  port: number,
  path: string,
  body: unknown,
  key?: string,
  onLastByte?: () => void,
  retried = false,
): Promise<any> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        // A retry goes on a socket of its own: the pool's others may be closing too.
        agent: retried ? false : agent,
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
          onLastByte?.();
          if ((res.statusCode ?? 500) >= 400)
            reject(new Error(`${path} answered ${res.statusCode}: ${text}`));
          else resolve(text ? JSON.parse(text) : undefined);
        });
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      // A kept-alive socket the server closed as this request went out on it (Node's servers close
      // sockets idle for 5 s unless told otherwise, as the bare broadcaster now is, and the
      // fan-out pauses between slices; full runs on a loaded machine ended on such an
      // ECONNRESET): the request never reached the server, so it goes again once, on a new socket. A duplicate this made
      // would show in the fan-out's duplicate count.
      if (req.reusedSocket && error.code === 'ECONNRESET' && !retried)
        postJson(port, path, body, key, onLastByte, true).then(resolve, reject);
      // Named: a full run has ended on a bare `socket hang up` (sessions 51, 52 and 55).
      else
        reject(
          namedError(`POST :${port}${path} (reused socket: ${req.reusedSocket}, a retry: ${retried})`, error),
        );
    });
    req.end(payload);
  });
}

/** Opens an SSE stream on `space` that reads and drops everything; resolves once it is live. */
function openStream(port: number, space: Space): Promise<ClientRequest> {
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
    req.on('error', (error) =>
      req.destroyed ? undefined : reject(namedError(`stream :${port} ${space.spaceId}`, error)),
    );
  });
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
