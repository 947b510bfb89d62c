import { afterAll, describe, expect, it } from 'vitest';
import { type DiffRequest, WorkerDiffEngine } from '../src/artifacts/diff-engine';
import { unifiedDiff } from '../src/artifacts/unified-diff.mjs';
import { RateLimitedError } from '../src/errors';

/** Two texts of `lines` lines with nothing in common: Myers' worst case. */
function worstCase(lines: number) {
  const text = (tag: string) =>
    Array.from({ length: lines }, (_, i) => `${tag}${(i * 7919) % lines}`).join('\n');
  return { from: { version: 1, content: text('a') }, to: { version: 2, content: text('b') } };
}

const engines: WorkerDiffEngine[] = [];
const engine = (options: ConstructorParameters<typeof WorkerDiffEngine>[0] = {}) => {
  const made = new WorkerDiffEngine(options);
  engines.push(made);
  return made;
};
afterAll(() => Promise.all(engines.map((e) => e.close())));

describe('WorkerDiffEngine', () => {
  it('computes in a worker thread exactly what the diff computes in process', async () => {
    const from = { version: 1, content: 'one\ntwo\nthree\n' };
    const to = { version: 2, content: 'one\n2\nthree\nfour' };
    const diff = await engine().diff({ key: 'k', fileName: 'notes.md', from, to });
    expect(diff).toBe(unifiedDiff('notes.md', from, to));
    expect(diff).toContain('--- notes.md\tversion 1');
  });

  it('keeps the event loop free while a worst-case diff runs', async () => {
    const pool = engine({ timeoutMs: 400 });
    const { from, to } = worstCase(20_000);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    const diff = await pool.diff({ key: 'worst', fileName: 'w.md', from, to });
    clearInterval(timer);
    // The process answered timers all along (an in-thread diff would allow none until it ends).
    expect(ticks).toBeGreaterThan(5);
    expect(diff.split('\n').filter((l) => l.startsWith('-a')).length).toBe(20_000);
  });

  it('computes a key once, for concurrent and later requests alike', async () => {
    class Counting extends WorkerDiffEngine {
      computed = 0;
      protected override compute(request: DiffRequest) {
        this.computed += 1;
        return super.compute(request);
      }
    }
    const pool = new Counting({ timeoutMs: 300 });
    engines.push(pool);
    const { from, to } = worstCase(10_000);
    const request = { key: 'same', fileName: 's.md', from, to };
    const [a, b] = await Promise.all([pool.diff(request), pool.diff(request)]);
    expect(a).toBe(b);
    expect(await pool.diff(request)).toBe(a);
    expect(pool.computed).toBe(1);
    await pool.diff({ ...request, key: 'other' });
    expect(pool.computed).toBe(2);
  });

  it('reports a worker that cannot start, and answers its diff with the replace-everything patch', async () => {
    const errors: unknown[] = [];
    const pool = engine({
      workerUrl: new URL('./no-such-worker.mjs', import.meta.url),
      onWorkerError: (error) => errors.push(error),
    });
    const from = { version: 1, content: '# Plan\n' };
    const to = { version: 2, content: '# Plan\n- dates\n' };
    const diff = await pool.diff({ key: 'broken', fileName: 'plan.md', from, to });
    expect(diff).toMatch(/^-# Plan$/m);
    expect(diff).toMatch(/^\+# Plan$/m);
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toContain('no-such-worker.mjs');
  });

  it('refuses diffs beyond its queue with 429', async () => {
    const pool = engine({ timeoutMs: 200, maxQueue: 2 });
    const { from, to } = worstCase(5_000);
    const requests = Array.from({ length: 5 }, (_, i) =>
      pool.diff({ key: `q${i}`, fileName: 'q.md', from, to }).then(
        () => 'ok',
        (error: unknown) => error,
      ),
    );
    const outcomes = await Promise.all(requests);
    // One running, two queued, two refused.
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(3);
    expect(outcomes.filter((o) => o instanceof RateLimitedError)).toHaveLength(2);
  });
});
