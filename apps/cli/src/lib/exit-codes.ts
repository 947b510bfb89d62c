import { isatty } from 'node:tty';

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

/** The standard streams that were on a terminal when convene started: Node restores its settings at the end. */
const TERMINALS = [0, 1, 2].filter((fd) => isatty(fd));

/**
 * SIGHUP when the terminal convene started on is gone (hung up: its window closed), which a run
 * then ends by whatever its code: Node, restoring the settings of that terminal as it ends, would
 * abort (SIGABRT or SIGSEGV).
 */
function hangUpIfGone(): NodeJS.Signals | undefined {
  return TERMINALS.some((fd) => !isatty(fd)) ? 'SIGHUP' : undefined;
}

/**
 * Ends the process with `code`; a signal's code (130, 143, 129) by that signal, once every exit
 * listener has run (a spinner's cursor shown again), as git and ssh end. A shell reports the same
 * code, and more: a loop running convene stops at Ctrl-C (bash carries on after a child that
 * merely exited 130), and the prompt starts on a line of its own.
 *
 * A run whose terminal is gone ends by SIGHUP whatever its code, as a process the closing window
 * killed (hangUpIfGone). A command can finish before convene's own SIGHUP is handled: an editor
 * that the closed window ended first fails an edit with 1.
 */
export function exitWith(code: number): never {
  return endProcess(code, SIGNAL_OF[code] ?? hangUpIfGone());
}

/**
 * Ends the process with `code` itself, not a signal's: a server stopped cleanly by SIGHUP exits
 * 129, as its supervisor is told. Unless its terminal is gone: then by SIGHUP, as exitWith.
 */
export function exitWithCode(code: number): never {
  return endProcess(code, hangUpIfGone());
}

function endProcess(code: number, signal: NodeJS.Signals | undefined): never {
  if (signal)
    process.once('exit', () => {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
      // On Linux the signal ends the process before kill() returns; POSIX lets another of its
      // threads take it a moment later: wait for it rather than go on to Node's end.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2000);
    });
  process.exit(code);
}

/**
 * What stopped convene (Ctrl-C, SIGTERM, SIGHUP), from the run's aborted signal: in words, and as
 * its exit code.
 */
export function stoppedBy(signal: AbortSignal): { said: string; exitCode: ExitCode } {
  return stoppedWith((signal.reason as Error | undefined)?.message);
}

/** What the signal named `name` (`SIGTERM`) stopped, in words, and as its exit code. */
export function stoppedWith(name: string | undefined): { said: string; exitCode: ExitCode } {
  const said =
    name === 'SIGHUP'
      ? 'stopped by SIGHUP (the terminal closed)'
      : name === 'SIGTERM'
        ? 'stopped by SIGTERM'
        : 'interrupted';
  return { said, exitCode: signalExitCode(name) };
}
