import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { writePgliteSeed } from '@convene/core';
import { cliRoot, repoRoot, testBuild } from './paths';

/** Vitest global setup: bundles the CLI once (tsdown, as `pnpm pack` does) into .test-build/. */
export default async function setup(): Promise<void> {
  // The bundle ships the web pages' build; turbo builds it before tests, a bare vitest may not have.
  if (!existsSync(join(repoRoot, 'apps/web/dist'))) {
    execFileSync('pnpm', ['--filter', '@convene/web', 'build'], { cwd: repoRoot, stdio: 'ignore' });
  }
  // So does the snapshot of a new PGlite cluster, as core's build makes it.
  await writePgliteSeed();
  execFileSync(
    join(cliRoot, 'node_modules/.bin/tsdown'),
    ['--out-dir', join(testBuild, 'dist'), '--log-level', 'warn'],
    {
      cwd: cliRoot,
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
}
