import { Worker } from 'node:worker_threads';
import { RateLimitedError } from '../errors';
import { DIFF_TIMEOUT_MS, replaceAllDiff, unifiedDiff, type VersionText } from './unified-diff.mjs';

export type { VersionText } from './unified-diff.mjs';

/** One diff to compute. `key` names the pair of versions: equal keys give equal diffs. */
export interface DiffRequest {
  key: string;
  fileName: string;
  from: VersionText;
  to: VersionText;
}

/**
 * The diff port: unified diffs computed where they cannot hold the thread that answers requests,
 * and cached by key (versions never change, so a diff never goes stale).
 */
export interface DiffEngine {
  diff(request: DiffRequest): Promise<string>;
  close(): Promise<void>;
}

export interface DiffEngineOptions {
  /** Worker threads computing diffs (default 1: a diff never takes more than one core). */
  workers?: number;
  /** Myers' budget per diff before the replace-everything patch (default 1 s). */
  timeoutMs?: number;
  /** Diffs waiting for a worker beyond this many are refused with 429 (default 16). */
  maxQueue?: number;
  /** Bytes of finished diffs kept for repeats (default 32 MiB). */
  cacheBytes?: number;
  /** The worker's script (default diff-worker.mjs beside this module; tests name another). */
  workerUrl?: URL;
  /**
   * A worker that failed (its script would not load, it threw, it died): its diff is answered with
   * the replace-everything patch, which is valid but says little, so the failure is reported here.
   */
  onWorkerError?: (error: unknown) => void;
}

/** Finished diffs, least recently used first out, bounded in bytes (UTF-16, as held). */
class DiffCache {
  private readonly entries = new Map<string, string>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string): string | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: string): void {
    const size = (key.length + value.length) * 2;
    if (size > this.maxBytes || this.entries.has(key)) return;
    this.entries.set(key, value);
    this.bytes += size;
    for (const [oldest, old] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= (oldest.length + old.length) * 2;
    }
  }
}

/** Shared by both engines: cache hits, then one computation per key at a time. */
abstract class CachingDiffEngine implements DiffEngine {
  private readonly cache: DiffCache;
  private readonly running = new Map<string, Promise<string>>();

  constructor(cacheBytes: number) {
    this.cache = new DiffCache(cacheBytes);
  }

  diff(request: DiffRequest): Promise<string> {
    const cached = this.cache.get(request.key);
    if (cached !== undefined) return Promise.resolve(cached);
    let running = this.running.get(request.key);
    if (!running) {
      running = this.compute(request)
        .then((diff) => {
          this.cache.set(request.key, diff);
          return diff;
        })
        .finally(() => this.running.delete(request.key));
      this.running.set(request.key, running);
    }
    return running;
  }

  protected abstract compute(request: DiffRequest): Promise<string>;
  abstract close(): Promise<void>;
}

interface Task {
  id: number;
  request: DiffRequest;
  resolve(diff: string): void;
  reject(error: unknown): void;
  watchdog?: NodeJS.Timeout;
}

/**
 * Diffs in a small pool of worker threads (diff-worker.mjs). A worker that overruns its budget
 * by far (or dies) is replaced, and its diff answered with the replace-everything patch, which
 * needs no comparison; a full queue is refused with 429.
 */
export class WorkerDiffEngine extends CachingDiffEngine {
  private readonly size: number;
  private readonly timeoutMs: number;
  private readonly maxQueue: number;
  private readonly workerUrl: URL;
  private readonly onWorkerError: (error: unknown) => void;
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Task>();
  private readonly queue: Task[] = [];
  private nextId = 0;
  private closed = false;

  constructor(options: DiffEngineOptions = {}) {
    super(options.cacheBytes ?? 32 * 1024 * 1024);
    this.size = Math.max(1, options.workers ?? 1);
    this.timeoutMs = options.timeoutMs ?? DIFF_TIMEOUT_MS;
    this.maxQueue = options.maxQueue ?? 16;
    this.workerUrl = options.workerUrl ?? new URL('./diff-worker.mjs', import.meta.url);
    this.onWorkerError = options.onWorkerError ?? (() => {});
  }

  protected compute(request: DiffRequest): Promise<string> {
    if (this.closed) return Promise.reject(new Error('the diff engine is closed'));
    if (this.queue.length >= this.maxQueue)
      return Promise.reject(new RateLimitedError(1, 'too many diffs in progress; retry shortly'));
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, request, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.queue.length > 0) {
      const worker = this.idle.pop() ?? (this.busy.size < this.size ? this.spawn() : undefined);
      if (!worker) return;
      const task = this.queue.shift()!;
      this.busy.set(worker, task);
      const { fileName, from, to } = task.request;
      // Myers' algorithm checks its budget as it goes; far past it, the worker is stuck.
      task.watchdog = setTimeout(() => this.abandon(worker, task), this.timeoutMs * 5 + 2000);
      worker.postMessage({ id: task.id, fileName, from, to, timeoutMs: this.timeoutMs });
    }
  }

  private spawn(): Worker {
    const worker = new Worker(this.workerUrl);
    worker.unref();
    worker.on('message', (message: { id: number; diff?: string; error?: string }) => {
      const task = this.busy.get(worker);
      if (!task || task.id !== message.id) return;
      this.finish(worker, task);
      this.idle.push(worker);
      if (message.diff !== undefined) task.resolve(message.diff);
      else task.reject(new Error(`diff failed: ${message.error}`));
      this.pump();
    });
    const lost = () => {
      const task = this.busy.get(worker);
      if (task) this.abandon(worker, task);
      else this.drop(worker);
    };
    worker.on('error', (error) => {
      this.onWorkerError(error);
      lost();
    });
    worker.on('exit', lost);
    return worker;
  }

  private finish(worker: Worker, task: Task): void {
    clearTimeout(task.watchdog);
    this.busy.delete(worker);
  }

  /** A stuck or dead worker: replaced, and its diff answered without comparing anything. */
  private abandon(worker: Worker, task: Task): void {
    this.finish(worker, task);
    this.drop(worker);
    void worker.terminate();
    try {
      const { fileName, from, to } = task.request;
      task.resolve(replaceAllDiff(fileName, from, to));
    } catch (error) {
      task.reject(error);
    }
    this.pump();
  }

  private drop(worker: Worker): void {
    const at = this.idle.indexOf(worker);
    if (at !== -1) this.idle.splice(at, 1);
    this.busy.delete(worker);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const task of this.queue.splice(0)) task.reject(new Error('the diff engine is closed'));
    const workers = [...this.idle, ...this.busy.keys()];
    for (const [worker, task] of this.busy) {
      this.finish(worker, task);
      task.reject(new Error('the diff engine is closed'));
    }
    this.idle.length = 0;
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
}

/** Diffs on the calling thread, for tests and tools that answer no requests. */
export class InlineDiffEngine extends CachingDiffEngine {
  constructor(private readonly timeoutMs = DIFF_TIMEOUT_MS) {
    super(8 * 1024 * 1024);
  }

  protected async compute({ fileName, from, to }: DiffRequest): Promise<string> {
    return unifiedDiff(fileName, from, to, { timeoutMs: this.timeoutMs });
  }

  async close(): Promise<void> {}
}
