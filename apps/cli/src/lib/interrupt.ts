import type { Context } from './context';
import { CliError } from './errors';
import { stoppedBy, stoppedWith } from './exit-codes';
import { mayHaveBeenDone } from './failure';

/**
 * How long a change stopped by a signal has to finish what it still does once aborted (withLock
 * releasing the lock it took): a server that does not answer must not hold Ctrl-C for minutes.
 */
export const GRACE_MS = 2_000;

/**
 * Runs `change`, whose requests change something on the server, with the run's signal: Ctrl-C
 * (SIGTERM, SIGHUP) while one is out aborts it, and its AbortError is reported as any failure
 * after which the server may have done it (`explain`: that it may have, with the Idempotency-Key
 * it went with), with the signal's exit code, where the run used to end at once, silently. What
 * `change` still does once aborted has GRACE_MS; past it the run ends all the same, with
 * `late` (what may have been done, and left undone) as the hint, and `details` in `--json`.
 */
export async function interruptible<T>(
  ctx: Context,
  change: (signal: AbortSignal) => Promise<T>,
  late: string,
  details: Record<string, unknown> = {},
): Promise<T> {
  const before = ctx.handlesInterrupt;
  ctx.handlesInterrupt = true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const overdue = new Promise<never>((_, reject) => {
    onAbort = () => {
      timer = setTimeout(() => {
        const stop = stoppedBy(ctx.signal);
        reject(
          new CliError(stop.said, {
            exitCode: stop.exitCode,
            hint: late,
            details: { ...details, mayHaveRun: true },
          }),
        );
      }, GRACE_MS);
    };
    ctx.signal.addEventListener('abort', onAbort, { once: true });
  });
  const running = change(ctx.signal);
  // Overdue, the run ends without it: whatever it ends with later is said by nobody.
  running.catch(() => {});
  try {
    return await Promise.race([running, overdue]);
  } finally {
    clearTimeout(timer);
    if (onAbort) ctx.signal.removeEventListener('abort', onAbort);
    ctx.handlesInterrupt = before;
  }
}

/**
 * The failure of a run that `signal` ends at once (a command that does not handle a stop itself)
 * while a change it sent is out, or was cut off and not yet answered: that it may have been done,
 * and how to see whether it was (mayHaveBeenDone), with the signal's exit code, where the run
 * ended silently. Undefined when no change is out: nothing to say, the exit code says it all.
 */
export function interruptedChange(ctx: Context, signal: string): CliError | undefined {
  const operation = ctx.changes.last();
  if (operation === undefined) return undefined;
  const stop = stoppedWith(signal);
  return new CliError(stop.said, {
    exitCode: stop.exitCode,
    hint: mayHaveBeenDone(ctx, operation),
    details: { mayHaveRun: true },
  });
}
