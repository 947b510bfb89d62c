import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv } from '@convene/core/testing';

export const serverRoot = join(dirname(fileURLToPath(import.meta.url)), '../..');
/** The server's entry point bundled for the run by the suites' global setup (build-server.ts). */
export const serverBundle = join(serverRoot, '.test-build/main.mjs');

export interface ServerProcess {
  child: ChildProcess;
  /** Everything the process printed so far, stdout and stderr. */
  output(): string;
  /** Resolves with the URL from the `listening on <url>` line. */
  ready: Promise<string>;
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts the real server entry point (`src/main.ts`, bundled for the run: see build-server.ts) as
 * its own process, so a signal reaches the server.
 * `umask` (octal) is set by a shell that then execs the server, which keeps the pid. `under` is a
 * command the server runs under (`unshare …`), which then holds the pid. `bundle` is another copy
 * of the bundle to start (its chunks beside it).
 */
export function spawnServer(
  env: Record<string, string>,
  options: { umask?: string; under?: string[]; bundle?: string } = {},
): ServerProcess {
  const node = [...(options.under ?? []), process.execPath, options.bundle ?? serverBundle];
  const [command, ...args] =
    options.umask === undefined ? node : ['sh', '-c', `umask ${options.umask} && exec "$@"`, 'sh', ...node];
  const child = spawn(command!, args, {
    cwd: serverRoot,
    env: childEnv({ LOG_LEVEL: 'warn', TEST_DATABASE_URL: '', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  // 'close', not 'exit': the process may exit before the last of its output is read.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const ready = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const match = text.match(/listening on (http:\/\/\S+)/);
      if (match?.[1]) resolve(match[1]);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    exited.then((code) => reject(new Error(`server exited with ${code} before listening:\n${text}`)));
  });
  ready.catch(() => {});
  return {
    child,
    output: () => text,
    ready,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
