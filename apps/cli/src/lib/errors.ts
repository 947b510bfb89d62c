import { AuthenticationError, ConveneError, NotFoundError } from '@convene/sdk';
import { ExitCode, stoppedBy } from './exit-codes';

/**
 * An error the CLI reports itself: what went wrong, the exit code, and what to try next. Every
 * failure ends up as one of these before it is printed (see `report` in main.ts).
 */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  /** What to try next: a command line or a sentence. */
  readonly hint: string | undefined;
  /** Extra fields for `--json` error output (e.g. `lockedBy`). */
  readonly details: Record<string, unknown>;

  constructor(
    message: string,
    options: { exitCode?: ExitCode; hint?: string; cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CliError';
    this.exitCode = options.exitCode ?? ExitCode.error;
    this.hint = options.hint;
    this.details = options.details ?? {};
  }
}

/**
 * A key the server gave that the credentials file could not keep (a full disk): the space was
 * created or joined all the same, so the failure shows the key rather than lose it, and `--json`
 * writes the command's answer (`answer`, the key in it) on stdout as if it had succeeded.
 */
export class KeyNotSavedError extends CliError {
  constructor(
    readonly answer: Record<string, unknown>,
    message: string,
    options: { hint: string; cause: unknown; exitCode: ExitCode | undefined },
  ) {
    super(message, {
      hint: options.hint,
      cause: options.cause,
      exitCode: options.exitCode ?? ExitCode.error,
    });
    this.name = 'KeyNotSavedError';
  }
}

/** A key the server gave for a space, and what convene says of it when it cannot keep it. */
export interface KeyGiven {
  readonly spaceId: string;
  /** The space's name, when it was read. */
  readonly name?: string;
  readonly role: 'owner' | 'participant';
  readonly key: string;
  readonly participantId: string;
}

/**
 * The failure of a command whose key could not be kept, `why` (see KeyNotSavedError). `again` says
 * what running the command again does, where it does not make another space or participant;
 * `exitCode` is a signal's, when one stopped the command (1 otherwise).
 */
export function keyNotKept(
  given: KeyGiven,
  answer: Record<string, unknown>,
  why: string,
  cause: unknown,
  { again, exitCode }: { again?: string | undefined; exitCode?: ExitCode | undefined } = {},
) {
  const done = given.role === 'owner' ? 'created' : 'joined';
  const named = given.name === undefined ? '' : `${JSON.stringify(given.name)} `;
  return new KeyNotSavedError(
    answer,
    `${done} space ${named}(${given.spaceId}), but could not keep its key: ${why}`,
    {
      hint: `Your ${given.role} key, kept nowhere else, so copy it now: ${given.key} (participant ${given.participantId}). It works as it is with the SDK or the REST API (header X-Private-Key). ${again ?? `Running the command again would make another ${given.role === 'owner' ? 'space' : 'participant'}.`}`,
      cause,
      exitCode,
    },
  );
}

/** Bad command-line input: exit 2, with the command's usage as the hint. */
export class UsageError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, { exitCode: ExitCode.usage, ...(hint ? { hint } : {}) });
    this.name = 'UsageError';
  }
}

/**
 * A command needed a saved space and this configuration holds none for the server: the reporter
 * first asks whether the server answers, since a wrong or stopped server is the likelier problem
 * (and the hint, creating or joining a space, would fail there too).
 */
export class NoSpaceSavedError extends CliError {
  constructor(message: string, options: { exitCode: ExitCode; hint: string }) {
    super(message, options);
    this.name = 'NoSpaceSavedError';
  }
}

/**
 * A failure already put in words of another format: `convene serve`'s, with JSON logs, is a JSON
 * line in the server's log shape (`line`), written as it is, alone.
 */
export class Reported extends CliError {
  constructor(
    readonly line: string,
    message: string,
    exitCode: ExitCode,
  ) {
    super(message, { exitCode });
    this.name = 'Reported';
  }
}

/**
 * A run stopped by Ctrl-C, SIGTERM or SIGHUP that ended cleanly (a wait, `artifact edit`, and
 * `tail` or `inbox --follow` stopped by SIGTERM or SIGHUP): there is nothing to report, but its
 * exit code is the signal's (130, 143, 129), so that a script or a supervisor can tell a stop
 * from an end.
 */
export class Stopped extends CliError {
  constructor(exitCode: ExitCode) {
    super('stopped', { exitCode });
    this.name = 'Stopped';
  }
}

/**
 * How following (`tail`, `inbox --follow`) ends once stopped: Ctrl-C is how a person ends it,
 * exit 0 (issue 14: "Ctrl-C exits 0"; a shell loop around it then goes on, as after any command
 * that handled its Ctrl-C); SIGTERM and SIGHUP, which a supervisor or a closed terminal send, are
 * their codes (143, 129).
 */
export function stopFollowing(signal: AbortSignal): void {
  const { exitCode } = stoppedBy(signal);
  if (exitCode !== ExitCode.interrupted) throw new Stopped(exitCode);
}

/**
 * Whether the server refused a key because its space is closed or past its TTL: its code says so,
 * `space_closed` or `space_expired`, whether the status is 409 (where the operation's table lists
 * 409), 401 (elsewhere, decisions.md) or 404 (key recovery); to a person all are the same fact.
 */
export function isSpaceClosed(error: unknown): boolean {
  return error instanceof ConveneError && (error.code === 'space_closed' || error.code === 'space_expired');
}

/**
 * Whether the server no longer takes a saved key at all: refused (left, kicked: 401), its space
 * gone (404), or closed or expired. Not a failure to reach the server, nor a 5xx.
 */
export const keyNoLongerTaken = (error: unknown): boolean =>
  error instanceof AuthenticationError || error instanceof NotFoundError || isSpaceClosed(error);

/** How a space the server refused as over ended, by its code: past its time to live, or closed by its owner. */
export const spaceOver = (error: ConveneError): 'expired' | 'closed' =>
  error.code === 'space_expired' ? 'expired' : 'closed';
