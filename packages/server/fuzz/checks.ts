import fc from 'fast-check';

/**
 * What the fuzz tests share besides arbitraries: the fixed seed and run counts, the facts about a
 * request that make it invalid beyond its schema (decisions.md: U+0000, nesting past 64 levels),
 * and the tally each file prints.
 */
export const SEED = Number(process.env.FUZZ_SEED ?? 20_261_123);
/** Runs per operation (REST) and per tool (MCP); `FUZZ_RUNS` scales both. */
export const RUNS = Number(process.env.FUZZ_RUNS ?? 45);

/** `FUZZ_ONLY=getAvatar,send_message` narrows a run to some operations or tools (to replay a failure). */
export const selected = (name: string): boolean => {
  const only = process.env.FUZZ_ONLY?.split(',');
  return !only || only.includes(name);
};

export function depthOf(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [node, depth] = item;
    if (node && typeof node === 'object') {
      max = Math.max(max, depth + 1);
      for (const child of Object.values(node)) stack.push([child, depth + 1]);
    }
  }
  return max;
}

export const hasNul = (value: unknown): boolean => JSON.stringify(value ?? null).includes('\\u0000');

/** Lone surrogates become U+FFFD, as any UTF-8 encoder makes them (encodeURIComponent throws). */
export const wellFormed = (value: string): string =>
  value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');

/** Requests sent and 5xx seen, by operation, and every failure found (each operation reports its first). */
export class Tally {
  requests = 0;
  serverErrors = 0;
  readonly byOperation = new Map<string, number>();
  readonly failures: string[] = [];

  count(operation: string, status: number): void {
    this.requests += 1;
    this.byOperation.set(operation, (this.byOperation.get(operation) ?? 0) + 1);
    if (status >= 500) this.serverErrors += 1;
  }

  /**
   * Runs one operation's property with the fixed seed: each value is sent by `probe`, which
   * answers the status seen and the problem found, if any. A failure is recorded rather than
   * thrown, so one run reports every operation that fails, not only the first.
   */
  async fuzz<T>(
    operation: string,
    values: fc.Arbitrary<T>,
    runs: number,
    probe: (value: T) => Promise<{ status: number; problem: string | null; sent: string }>,
  ): Promise<void> {
    const property = fc.asyncProperty(values, async (value) => {
      const { status, problem, sent } = await probe(value);
      this.count(operation, status);
      if (problem) this.failures.push(`${operation} ${sent.slice(0, 300)}: ${problem}`);
      return problem === null;
    });
    await fc.assert(property, { seed: SEED, numRuns: runs, endOnFailure: true }).catch((error: unknown) => {
      if (!this.failures.length) throw error;
    });
  }

  summary(what: string, runs: number): string {
    return `fuzz ${what}: ${this.requests} requests over ${this.byOperation.size} operations (seed ${SEED}, ${runs} runs each), ${this.serverErrors} answers of 5xx`;
  }
}
