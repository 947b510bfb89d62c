// The process side of `serve` (what `pnpm start` and `convene serve` run), in this process.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';
import { loadConfig } from '../src/env';
import { serve, startFailure } from '../src/serve';

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/**
 * The stop handlers `serve` adds from here on: `added` lists them by signal (SIGNALS' order),
 * `remove` takes them off again (the test runner's own stay).
 */
function newSignalListeners() {
  const before = SIGNALS.map((signal) => process.listeners(signal));
  const added = () =>
    SIGNALS.map((signal, i) => process.listeners(signal).filter((l) => !before[i]!.includes(l)));
  return {
    before,
    added,
    remove: () => {
      added().forEach((listeners, i) => {
        for (const listener of listeners) process.off(SIGNALS[i]!, listener);
      });
    },
  };
}

it('stops cleanly from its readiness line on: the signal handlers are in place before it is printed', async () => {
  const listeners = newSignalListeners();
  let atReadiness: number[] | undefined;
  // A script sends SIGTERM as soon as it reads the line: without a handler, the signal kills.
  const log = vi.spyOn(console, 'log').mockImplementation((line: unknown) => {
    if (String(line).includes('Convene listening'))
      atReadiness = SIGNALS.map((signal) => process.listenerCount(signal));
  });
  // As text, printed with console.log (JSON lines go through the loggers' own output; the handlers
  // are installed before either is written).
  const server = await serve(
    loadConfig({
      DATABASE_URL: 'memory://',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'text',
    }),
  ).finally(() => log.mockRestore());
  try {
    expect(atReadiness).toEqual(listeners.before.map((them) => them.length + 1));
  } finally {
    listeners.remove();
    await server.close();
  }
});

/** Runs `serve` with this environment and gives its readiness line; the server is closed after. */
async function readinessLine(env: Record<string, string>): Promise<string | undefined> {
  const listeners = newSignalListeners();
  const lines: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
  const server = await serve(loadConfig({ PORT: '0', LOG_LEVEL: 'warn', ...env })).finally(() =>
    log.mockRestore(),
  );
  listeners.remove();
  await server.close();
  return lines.find((line) => line.includes('Convene listening'));
}

it('takes MEMORY:// as memory:// (URL schemes are case-insensitive): in memory, nothing kept under DATA_DIR', async () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'convene-serve-memory-')), 'data');
  expect(await readinessLine({ DATABASE_URL: 'MEMORY://', DATA_DIR: dataDir, LOG_FORMAT: 'text' })).toMatch(
    /database in-memory PGlite\)$/,
  );
  // Neither the database nor the server secret was written to disk.
  expect(existsSync(dataDir)).toBe(false);
});

it('says when it listens on every interface: the address Fastify gives for HOST=0.0.0.0 is a loopback one', async () => {
  const wildcard = await readinessLine({ DATABASE_URL: 'memory://', HOST: '0.0.0.0', LOG_FORMAT: 'text' });
  expect(wildcard).toMatch(
    /^Convene listening on http:\/\/\S+ \(on every IPv4 interface, HOST=0\.0\.0\.0; public URL /,
  );
  const loopback = await readinessLine({ DATABASE_URL: 'memory://', HOST: '127.0.0.1', LOG_FORMAT: 'text' });
  expect(loopback).toMatch(/^Convene listening on http:\/\/127\.0\.0\.1:\d+ \(public URL /);
});

it('with PORT=0 takes a free port before it starts, and its links name that port (PUBLIC_URL unset), or PUBLIC_URL as given', async () => {
  const line = await readinessLine({ DATABASE_URL: 'memory://', HOST: '127.0.0.1', LOG_FORMAT: 'text' });
  const port = /^Convene listening on http:\/\/127\.0\.0\.1:(\d+) /.exec(line ?? '')?.[1];
  expect(Number(port)).toBeGreaterThan(0);
  expect(line).toContain(`public URL http://localhost:${port},`);
  const given = await readinessLine({
    DATABASE_URL: 'memory://',
    HOST: '127.0.0.1',
    LOG_FORMAT: 'text',
    PUBLIC_URL: 'https://convene.example.com',
  });
  expect(given).toContain('public URL https://convene.example.com,');
});

it('refuses a HOST that is no address of this machine as a setting, by its name: exit 2, as the others', async () => {
  // 192.0.2.1 (TEST-NET-1) is no machine's: listen fails with EADDRNOTAVAIL (an operator's
  // trial: it exited 1, as a failed start).
  const refused = await readinessLine({
    DATABASE_URL: 'memory://',
    HOST: '192.0.2.1',
    LOG_FORMAT: 'text',
  }).catch((error: unknown) => error);
  expect(startFailure(refused)).toEqual({
    message:
      'invalid configuration: HOST: 192.0.2.1 is no address of this machine to listen on (EADDRNOTAVAIL)',
    exitCode: 2,
  });
  // A name that names nothing here; or, where no name server answers, a start that failed (exit 1).
  const unknown = await readinessLine({
    DATABASE_URL: 'memory://',
    HOST: 'no-such-host.invalid',
    LOG_FORMAT: 'text',
  }).catch((error: unknown) => error);
  expect([
    {
      message:
        'invalid configuration: HOST: no-such-host.invalid is no address of this machine to listen on (ENOTFOUND)',
      exitCode: 2,
    },
    {
      message:
        'the server did not start: HOST no-such-host.invalid could not be looked up: no name server answered (EAI_AGAIN)',
      exitCode: 1,
    },
  ]).toContainEqual(startFailure(unknown));
  // Any other failure to start is one (exit 1).
  expect(startFailure(new Error('listen EADDRINUSE'))).toEqual({
    message: 'the server did not start: listen EADDRINUSE',
    exitCode: 1,
  });
});

it('ends once on a signal with JSON logs: after they are written, not again when the wait for them runs out', async () => {
  const listeners = newSignalListeners();
  const exit = vi.fn();
  const server = await serve(
    loadConfig({
      DATABASE_URL: 'memory://',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      LOG_FORMAT: 'json',
    }),
    { exit },
  );
  try {
    // Ctrl-C, as its handler receives it (emitting the signal would reach the test runner's too).
    for (const listener of listeners.added()[SIGNALS.indexOf('SIGINT')]!) (listener as () => void)();
    await vi.waitFor(() => expect(exit).toHaveBeenCalledWith(0), { timeout: 10_000 });
    // The wait for the output (2 s) runs out after it has been written: it ends nothing twice.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(exit).toHaveBeenCalledTimes(1);
  } finally {
    listeners.remove();
    await server.close();
  }
});
