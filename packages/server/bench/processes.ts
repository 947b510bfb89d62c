// The server processes a benchmark runs, and the PostgreSQL it runs them on.
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getHeapSpaceStatistics } from 'node:v8';
import { openDatabase, rowsOf } from '@convene/core';
import { sql } from 'drizzle-orm';

const here = dirname(fileURLToPath(import.meta.url));

/** Every process a benchmark forked that may still run. */
const forked = new Set<ChildProcess>();

/**
 * Forks a file of this folder (through tsx, or another checkout's), and has it killed whenever the
 * benchmark ends: a run that fails half-way (an error, Ctrl-C) left its servers, the bare baselines
 * and the subscribers of a thousand streams running, loading the machine for whatever ran next.
 */
export function forkBench(file: string, options: Parameters<typeof fork>[2] & object): ChildProcess {
  killForkedOnExit();
  const child = fork(file, [], options);
  forked.add(child);
  child.once('exit', () => forked.delete(child));
  return child;
}

let killingOnExit = false;

/**
 * In the process that forks (never in the servers it forks, which import this file and stop
 * gracefully on SIGTERM): its end kills what it forked, and a signal ends it through
 * process.exit, so that they go with it.
 */
function killForkedOnExit(): void {
  if (killingOnExit) return;
  killingOnExit = true;
  process.once('exit', () => {
    for (const child of forked) child.kill('SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.once(signal, () => process.exit(128 + constants.signals[signal]));
}

/** Forks a benchmark process (a file of this folder) and waits for the port it listens on. */
export async function start(
  file: string,
  env: Record<string, string>,
  children: ChildProcess[],
  options: {
    /** More Node flags (e.g. --cpu-prof). */
    execArgv?: string[];
    /** Its standard output goes nowhere: a server logging at the default level, as in production. */
    quiet?: boolean;
    /**
     * The bench folder of another checkout (`--compare`): its file runs, with its own packages
     * (tsx is resolved from there too).
     */
    from?: string;
  } = {},
): Promise<{ child: ChildProcess; port: number }> {
  const child = forkBench(join(options.from ?? here, file), {
    ...(options.from ? { cwd: join(options.from, '..') } : {}),
    execArgv: ['--import', 'tsx', ...(options.execArgv ?? [])],
    env: { ...process.env, ...env },
    stdio: ['ignore', options.quiet ? 'ignore' : 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${file} did not start`)), 60_000);
    child.once('message', (m: { ready: number }) => {
      clearTimeout(timer);
      resolve(m.ready);
    });
    child.once('exit', (code) => reject(new Error(`${file} exited with ${code}`)));
  });
  return { child, port };
}

/** A server's memory after a full garbage collection, bytes. */
export interface MemoryProbe {
  /** The resident set: what the machine gives the process. */
  rss: number;
  /** What JavaScript holds: the live heap, and the Buffers (external memory) it references. */
  js: number;
  external: number;
  /**
   * What V8's young generation holds committed: 32 MiB after a burst of allocation, given back
   * (to 1-2 MiB) only once the process has been quiet for a while.
   */
  newSpace: number;
}

/**
 * A server's memory right after a full garbage collection (the process runs with --expose-gc and
 * answers with answerMemoryProbes), so that garbage not yet collected, which comes and goes with
 * the collector's timing, is not counted.
 */
export function memoryOf(child: ChildProcess): Promise<MemoryProbe> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off('message', answer);
      reject(new Error('the server did not answer the memory probe'));
    }, 10_000);
    const answer = (m: { memory?: MemoryProbe }) => {
      if (typeof m?.memory?.rss !== 'number') return;
      clearTimeout(timer);
      child.off('message', answer);
      resolve(m.memory);
    };
    child.on('message', answer);
    child.send({ memory: true });
  });
}

/** A young generation this small has been given back (it starts at 1 MiB, and grows to 32). */
const SETTLED_NEW_SPACE = 4 * 2 ** 20;

/**
 * A server's memory once it has settled: its external memory (Buffers, the output of its sockets
 * among them) is back under `drainedBelow`, V8 has given its young generation back, and the
 * resident set has not dropped by a MiB for eight probes a second apart (60 s at most); the least
 * probe. V8 gives memory back in steps once the process is quiet: its young generation (32 MiB
 * committed after a burst of allocation) after about 6 s, freed pages about 5 s later. Probes
 * taken over a fixed window (the least of ten a second apart, before the streams opened and after)
 * caught those steps or not, and read 15.1, 20.5 and 25.3 MiB per 1,000 streams in three runs of
 * the same code (waiting for the young generation alone: 20.7 and 24.0), while what JavaScript
 * held stayed at 10.4-10.6.
 */
export async function settledMemoryOf(
  child: ChildProcess,
  drainedBelow = Number.POSITIVE_INFINITY,
): Promise<MemoryProbe> {
  const second = () => new Promise((r) => setTimeout(r, 1000));
  let least: MemoryProbe | undefined;
  let latest = await memoryOf(child);
  // Probes in a row, once settled, that did not lower the least resident set by a MiB.
  let steady = 0;
  for (let i = 0; i < 60 && steady < 8; i++) {
    if (i > 0) {
      await second();
      latest = await memoryOf(child);
    }
    if (latest.external >= drainedBelow || latest.newSpace > SETTLED_NEW_SPACE) {
      steady = 0;
      continue;
    }
    steady = least && latest.rss > least.rss - 2 ** 20 ? steady + 1 : 0;
    if (!least || latest.rss < least.rss) least = latest;
  }
  if (!least) console.warn('  memory probe: the server did not settle within 60 s; its last probe is used');
  return least ?? latest;
}

/** In a benchmark's server process: answers memoryOf (the flag --expose-gc gives it gc()). */
export function answerMemoryProbes(): void {
  process.on('message', (m: { memory?: boolean }) => {
    if (!m?.memory) return;
    const gc = (globalThis as { gc?: () => void }).gc;
    if (!gc) throw new Error('a memory probe needs --expose-gc');
    gc();
    const { rss, heapUsed, external } = process.memoryUsage();
    const newSpace =
      getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
    process.send?.({ memory: { rss, js: heapUsed + external, external, newSpace } satisfies MemoryProbe });
  });
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/**
 * BENCH_DATABASE_URL, else the throwaway test server on 25432, started if it is not running: a
 * port below the ephemeral ones (32768 on), which the load generators take by the thousand (the
 * durable server, started after them on 55436, twice found its port taken by one).
 */
export function ensurePostgres(): Promise<string> {
  return ensureServer('BENCH_DATABASE_URL', 25432, {});
}

/**
 * A PostgreSQL that flushes every commit to the disk, as PostgreSQL does by default
 * (BENCH_DURABLE_DATABASE_URL, else a throwaway one on port 25436 with PGTEST_DURABLE=1).
 */
export async function ensureDurablePostgres(): Promise<string> {
  const url = await ensureServer('BENCH_DURABLE_DATABASE_URL', 25436, { PGTEST_DURABLE: '1' });
  const database = await openDatabase({ url, migrate: false, maxConnections: 1 });
  try {
    const [settings] = rowsOf<{ fsync: string; commit: string }>(
      await database.db.execute(
        sql`select current_setting('fsync') as fsync, current_setting('synchronous_commit') as commit`,
      ),
    );
    if (settings?.fsync !== 'on' || settings.commit !== 'on')
      throw new Error(
        `${url} runs with fsync ${settings?.fsync} and synchronous_commit ${settings?.commit}: not durable`,
      );
  } finally {
    await database.close();
  }
  return url;
}

async function ensureServer(variable: string, port: number, env: Record<string, string>): Promise<string> {
  const given = process.env[variable];
  const url = given ?? `postgres://postgres@127.0.0.1:${port}/postgres`;
  const probe = async () => {
    try {
      const database = await openDatabase({ url, migrate: false, maxConnections: 1 });
      try {
        await database.db.execute(sql`select 1`);
        return true;
      } finally {
        await database.close();
      }
    } catch {
      return false;
    }
  };
  if (await probe()) return url;
  if (given) throw new Error(`cannot reach ${url}`);
  console.log(`starting a throwaway PostgreSQL on port ${port} with scripts/test-postgres.sh`);
  return execFileSync(join(here, '../../../scripts/test-postgres.sh'), ['start', String(port)], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
  }).trim();
}

/**
 * Flushes PostgreSQL's dirty pages now (CHECKPOINT), so that a periodic checkpoint of what came
 * before does not land in a measurement. Skipped, with a note, for a role that may not.
 */
export async function checkpoint(url: string): Promise<void> {
  const database = await openDatabase({ url, migrate: false, maxConnections: 1 });
  try {
    await database.db.execute(sql`checkpoint`);
  } catch (error) {
    console.log(`no checkpoint before the section: ${(error as Error).message}`);
  } finally {
    await database.close();
  }
}
