import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { cliRoot, testBuild } from './paths';

/** Vitest global setup: bundles the CLI once (tsdown, as `pnpm pack` does) into .test-build/. */
export default function setup(): void {
  execFileSync(
    join(cliRoot, 'node_modules/.bin/tsdown'),
    ['--out-dir', join(testBuild, 'dist'), '--log-level', 'warn'],
    {
      cwd: cliRoot,
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
}
