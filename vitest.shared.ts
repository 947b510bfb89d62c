import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * A sequencer that starts the files named in `slow` first, in that order (each a path's end), then
 * the others in Vitest's own order. Without a cache of earlier runs (a fresh clone: CI) Vitest
 * starts the largest files first, and a small file whose few tests wait long on clocks (locks'
 * lifetimes) then ran last, alone on one of the two cores while the other had nothing left.
 */
export function slowFirst(slow: readonly string[]): typeof BaseSequencer {
  const rank = (spec: TestSpecification) => {
    const i = slow.findIndex((end) => spec.moduleId.endsWith(end));
    return i === -1 ? slow.length : i;
  };
  return class extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      const sorted = await super.sort(files);
      return sorted
        .map((spec, i) => ({ spec, i, rank: rank(spec) }))
        .sort((a, b) => a.rank - b.rank || a.i - b.i)
        .map(({ spec }) => spec);
    }
  };
}

export interface SuiteOptions {
  include?: string[];
  /**
   * What runs on one database only: on PostgreSQL when TEST_DATABASE_URL is set, else on PGlite.
   * `true` for the whole suite of a client (the SDK's, the CLI's: they meet the database only
   * through a server whose own suite runs on both), or the files whose subject does not depend on
   * the engine (the pages in a browser).
   */
  once?: true | string[];
  /**
   * Whether each test file gets a fresh module graph (the default). A suite whose files all build
   * their own servers and databases may share one per worker: the server's suite spent a third of
   * its time importing the same modules again for every file.
   */
  isolate?: boolean;
  /** Files started first, in this order (each a path's end): see `slowFirst`. */
  slow?: readonly string[];
}

/**
 * Every suite runs on PGlite, and again on PostgreSQL when TEST_DATABASE_URL is set: two
 * projects over the same files, the first with the variable cleared; what `once` names runs in
 * the second only.
 */
export function conveneVitestConfig({
  include = ['test/**/*.test.ts'],
  once = [],
  isolate = true,
  slow,
}: SuiteOptions = {}) {
  const postgresUrl = process.env.TEST_DATABASE_URL;
  const base = {
    include,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks' as const,
    isolate,
    // expect.poll waits for a condition; on a loaded machine (CI, three workers beside real server
    // processes and a browser) one second is not enough for a page to catch up.
    expect: { poll: { timeout: 10_000 } },
  };
  // The order files start in is the run's, not a project's. Three workers on these machines' two
  // cores: a suite's files spend a sixth of their time waiting (on clocks, on the processes they
  // started), which a third worker fills; the server's suite took 10% less, the CLI's 12%.
  const run = { maxWorkers: 3, ...(slow ? { sequence: { sequencer: slowFirst(slow) } } : {}) };
  const pglite = { test: { ...base, name: 'pglite', env: { TEST_DATABASE_URL: '' } } };
  if (!postgresUrl) return defineConfig({ test: { ...run, projects: [pglite] } });
  const postgres = { test: { ...base, name: 'postgres', env: { TEST_DATABASE_URL: postgresUrl } } };
  return defineConfig({
    test: {
      ...run,
      projects:
        once === true
          ? [postgres]
          : [{ test: { ...pglite.test, exclude: [...configDefaults.exclude, ...once] } }, postgres],
    },
  });
}
