import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const script = join(dirname(fileURLToPath(import.meta.url)), '../../../../scripts/test-postgres.sh');

/** Runs scripts/test-postgres.sh (start, restart, stop) on the given port; its output, trimmed. */
export async function postgresScript(command: string, port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run(script, [command, String(port), ...args], { timeout: 120_000 });
  return stdout.trim();
}
