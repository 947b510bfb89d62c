// The server processes a benchmark runs, and the PostgreSQL it runs them on.
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '@convene/core';
import { sql } from 'drizzle-orm';

const here = dirname(fileURLToPath(import.meta.url));

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
  } = {},
): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(join(here, file), [], {
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

/**
 * A server's memory once it has settled: its external memory (Buffers, the output of its sockets
 * among them) is back under `drainedBelow` (10 s at most), then the least of ten probes a second
 * apart: V8 gives freed pages back only once the process has been quiet for about 6 s (its memory
 * reducer), 20-30 MiB 3 to 8 s after 1,000 streams opened, and the same before them after the
 * previous load. One probe a second after opening swung by tens of MiB from run to run, and the
 * least of three still read 81.6, 31.1 and -6.1 MiB in three runs of the same code.
 */
export async function settledMemoryOf(
  child: ChildProcess,
  drainedBelow = Number.POSITIVE_INFINITY,
): Promise<MemoryProbe> {
  const second = () => new Promise((r) => setTimeout(r, 1000));
  let least = await memoryOf(child);
  for (let i = 0; i < 10 && least.external >= drainedBelow; i++) {
    await second();
    least = await memoryOf(child);
  }
  for (let i = 0; i < 9; i++) {
    await second();
    const probe = await memoryOf(child);
    if (probe.rss < least.rss) least = probe;
  }
  return least;
}

/** In a benchmark's server process: answers memoryOf (the flag --expose-gc gives it gc()). */
export function answerMemoryProbes(): void {
  process.on('message', (m: { memory?: boolean }) => {
    if (!m?.memory) return;
    const gc = (globalThis as { gc?: () => void }).gc;
    if (!gc) throw new Error('a memory probe needs --expose-gc');
    gc();
    const { rss, heapUsed, external } = process.memoryUsage();
    process.send?.({ memory: { rss, js: heapUsed + external, external } satisfies MemoryProbe });
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

/** BENCH_DATABASE_URL, else the throwaway test server on 55432, started if it is not running. */
export async function ensurePostgres(): Promise<string> {
  const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:55432/postgres';
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
  if (process.env.BENCH_DATABASE_URL) throw new Error(`cannot reach ${url}`);
  console.log('starting a throwaway PostgreSQL with scripts/test-postgres.sh');
  return execFileSync(join(here, '../../../scripts/test-postgres.sh'), ['start'], {
    encoding: 'utf8',
  }).trim();
}
