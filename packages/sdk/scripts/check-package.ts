/**
 * Packs the SDK as it would be published (`pnpm pack`: publishConfig applied, workspace ranges
 * rewritten, `prepack` builds dist) and checks the tarball with publint (strict) and
 * arethetypeswrong. `pnpm --filter @convene/sdk check:package`; test/unit/package.test.ts runs the
 * same checks on the tarball it then installs.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name: string) => join(packageRoot, 'node_modules/.bin', name);

/** Packs the package into a fresh temporary directory; returns the tarball's path. */
export function packTarball(): string {
  const destination = mkdtempSync(join(tmpdir(), 'convene-sdk-pack-'));
  execFileSync('pnpm', ['pack', '--pack-destination', destination], { cwd: packageRoot, stdio: 'pipe' });
  const tarball = readdirSync(destination).find((file) => file.endsWith('.tgz'));
  if (!tarball) throw new Error(`pnpm pack wrote no tarball to ${destination}`);
  return join(destination, tarball);
}

/** Runs publint and arethetypeswrong on a tarball; throws with their report when either complains. */
export function checkTarball(tarball: string): string {
  const run = (command: string, args: string[]) => {
    try {
      return execFileSync(command, args, { cwd: packageRoot, encoding: 'utf8', stdio: 'pipe' });
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: string; stderr?: string };
      throw new Error(`${command} ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`);
    }
  };
  const publint = run(bin('publint'), ['run', tarball, '--strict']);
  const attw = run(bin('attw'), [tarball, '--format', 'ascii']);
  return `${publint}\n${attw}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const tarball = packTarball();
  console.log(checkTarball(tarball));
  console.log(`packed and checked: ${tarball}`);
}
