/** The exit codes scripts can rely on (the public interface, with the command names). */
export const ExitCode = {
  ok: 0,
  error: 1,
  usage: 2,
  /**
   * A credential is missing or no longer works: no key for the space id named (or for any space),
   * a key that stopped working, not logged in, not the owner. Log in, or join the space (again).
   */
  auth: 4,
  /**
   * What was named names nothing: a space by a name or the start of an id (among those convene
   * holds keys for), a participant, a document, a version, a token, a webhook, a message, a file.
   * Also, on a terminal, nothing to pick from where one was asked for (nobody to kick).
   */
  notFound: 5,
  /**
   * Locked by someone else, or a state conflict (a closed space, a stale baseVersion); also a
   * refusal for now, a 429 (a space's message budget, the rate limit), which has no code of its
   * own: as for a lock someone holds, what to do is wait and try again, not log in or join.
   */
  conflict: 6,
  /** Ctrl-C (128 + SIGINT), as shells report it. */
  interrupted: 130,
  /** Its terminal closed (128 + SIGHUP), as shells report a process it killed. */
  hangup: 129,
  /** Asked to stop (128 + SIGTERM): `kill`, a service manager, `timeout`. */
  terminated: 143,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** The exit code of a run stopped by `signal` (what `AbortSignal.reason` names), as shells report it. */
export function signalExitCode(signal: string | undefined): ExitCode {
  if (signal === 'SIGHUP') return ExitCode.hangup;
  if (signal === 'SIGTERM') return ExitCode.terminated;
  return ExitCode.interrupted;
}

const SIGNAL_OF: Partial<Record<number, NodeJS.Signals>> = {
  [ExitCode.interrupted]: 'SIGINT',
  [ExitCode.terminated]: 'SIGTERM',
  [ExitCode.hangup]: 'SIGHUP',
};

/**
 * Ends the process with `code`; a signal's code (130, 143, 129) by that signal, once every exit
 * listener has run (a spinner's cursor shown again), as git and ssh end. A shell reports the same
 * code, and more: a loop running convene stops at Ctrl-C (bash carries on after a child that
 * merely exited 130), and the prompt starts on a line of its own. Dying of SIGHUP also spares a
 * terminal that is gone Node's restoring of its settings, which aborts the process (EIO).
 */
export function exitWith(code: number): never {
  const signal = SIGNAL_OF[code];
  if (signal)
    process.once('exit', () => {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
      // The signal may be taken by another of the process's threads, a moment later: the main
      // thread waits for it here rather than going on to Node's end, whose restoring of a gone
      // terminal's settings aborts (a closed window once ended an edit by SIGABRT in CI).
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2000);
    });
  process.exit(code);
}

/**
 * What stopped convene (Ctrl-C, SIGTERM, SIGHUP), from the run's aborted signal: in words, and as
 * its exit code.
 */
export function stoppedBy(signal: AbortSignal): { said: string; exitCode: ExitCode } {
  const name = (signal.reason as Error | undefined)?.message;
  const said =
    name === 'SIGHUP'
      ? 'stopped by SIGHUP (the terminal closed)'
      : name === 'SIGTERM'
        ? 'stopped by SIGTERM'
        : 'interrupted';
  return { said, exitCode: signalExitCode(name) };
}
