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
