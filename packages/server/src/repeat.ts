import type { FastifyBaseLogger } from 'fastify';

/**
 * Runs `task` every `intervalMs`, one run at a time (a tick while a run goes on is skipped), on an
 * unref'd timer that never keeps the process alive. Returns the stop function, which resolves
 * once a run in progress is over. `task` handles its own failures.
 */
export function repeatEvery(intervalMs: number, task: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= task().finally(() => {
      running = undefined;
    });
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

/**
 * `work` made a task for repeatEvery, as a periodic sweep named `what` runs it: a failing run is
 * logged once until a run works again (once per outage, not every interval), and, where `recovery`
 * is said, the first run that works again too.
 */
export function failuresLoggedOnce(
  log: Pick<FastifyBaseLogger, 'info' | 'warn'>,
  what: string,
  work: () => Promise<void>,
  { recovery = true }: { recovery?: boolean } = {},
): () => Promise<void> {
  let failing = false;
  return async () => {
    try {
      await work();
      if (failing && recovery) log.info(`${what} recovered`);
      failing = false;
    } catch (err) {
      if (!failing) log.warn({ err }, `${what} failed; retrying every interval`);
      failing = true;
    }
  };
}
