// The process side of `serve` (what `pnpm start` and `convene serve` run), in this process.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';
import { loadConfig } from '../src/env';
import { serve } from '../src/serve';

it('stops cleanly from its readiness line on: the signal handlers are in place before it is printed', async () => {
  const signals = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
  const before = signals.map((signal) => process.listeners(signal));
  let atReadiness: number[] | undefined;
  // A script sends SIGTERM as soon as it reads the line: without a handler, the signal kills.
  const log = vi.spyOn(console, 'log').mockImplementation((line: unknown) => {
    if (String(line).startsWith('Convene listening'))
      atReadiness = signals.map((signal) => process.listenerCount(signal));
  });
  const server = await serve(
    loadConfig({ DATABASE_URL: 'memory://', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' }),
  ).finally(() => log.mockRestore());
  try {
    expect(atReadiness).toEqual(before.map((listeners) => listeners.length + 1));
  } finally {
    signals.forEach((signal, i) => {
      for (const listener of process.listeners(signal))
        if (!before[i]!.includes(listener)) process.off(signal, listener);
    });
    await server.close();
  }
});

it('takes MEMORY:// as memory:// (URL schemes are case-insensitive): in memory, nothing kept under DATA_DIR', async () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'convene-serve-memory-')), 'data');
  const lines: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
  const server = await serve(
    loadConfig({ DATABASE_URL: 'MEMORY://', DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent' }),
  ).finally(() => log.mockRestore());
  try {
    expect(lines.find((line) => line.startsWith('Convene listening'))).toMatch(
      /database in-memory PGlite\)$/,
    );
    // Neither the database nor the server secret was written to disk.
    expect(existsSync(dataDir)).toBe(false);
  } finally {
    await server.close();
  }
});
