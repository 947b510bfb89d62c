import { DomainError, isDatabaseUnavailable, ShuttingDownError } from '@convene/core';

/**
 * The `err` serializer of every log line: an error as far as it can be told without its data.
 * Database errors carry the statement and its bound values (drizzle's "Failed query: … params:
 * …", the message of every error wrapping it) and PostgreSQL's messages may quote a value
 * ("invalid input syntax for type uuid: …"); bound values are key hashes, emails, tokens. So a
 * database error is logged by its SQLSTATE and the names PostgreSQL gives (constraint, table,
 * column, routine), never by its message, and no error is logged with properties it was not
 * vetted for. The failures a server expects (its database away or restarting, its own shutdown)
 * are logged without stack frames: every request of a database restart logged the same ones.
 */
export interface LoggedError {
  [field: string]: unknown;
  type: string;
  message: string;
  code?: string;
  constraint?: string;
  table?: string;
  column?: string;
  routine?: string;
  cause?: LoggedError;
}

const MAX_CAUSES = 5;

/** An error whose message may carry a statement's values. */
function isDatabaseError(e: object): boolean {
  const name = (e as { name?: unknown }).name;
  const ctor = (e as { constructor?: { name?: unknown } }).constructor?.name;
  const message = (e as { message?: unknown }).message;
  return (
    name === 'PostgresError' ||
    ctor === 'PostgresError' ||
    ctor === 'DrizzleQueryError' ||
    (typeof message === 'string' && /Failed query:|\bparams:/.test(message)) ||
    typeof (e as { severity?: unknown }).severity === 'string'
  );
}

/** An error and the errors it wraps (`cause`), up to MAX_CAUSES of them. */
function* causesOf(error: unknown): Generator<object> {
  let e: unknown = error;
  for (let i = 0; i <= MAX_CAUSES && e && typeof e === 'object'; i++, e = (e as { cause?: unknown }).cause)
    yield e;
}

/** Whether this error or one of its causes is a database error. */
function carriesDatabaseError(error: unknown): boolean {
  for (const e of causesOf(error)) if (isDatabaseError(e)) return true;
  return false;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The frames of a stack, without its first line (which repeats the message). */
const framesOf = (stack: unknown): string | undefined =>
  typeof stack === 'string'
    ? stack
        .split('\n')
        .filter((line) => /^\s+at /.test(line))
        .join('\n')
    : undefined;

/** Whether this error, or one it wraps, is an unavailability the server expects and answers 503. */
function isExpectedFailure(error: unknown): boolean {
  if (isDatabaseUnavailable(error)) return true;
  for (const e of causesOf(error)) if (e instanceof DomainError) return e.kind === 'UNAVAILABLE';
  return false;
}

export function serializeError(
  error: unknown,
  depth = 0,
  frames = !isExpectedFailure(error),
): LoggedError & { stack: string } {
  if (!error || typeof error !== 'object')
    return {
      type: typeof error,
      message: typeof error === 'string' ? '[string thrown]' : String(error),
      stack: '',
    };
  const e = error as Record<string, unknown>;
  const type = text(e.name) ?? (e.constructor as { name?: string } | undefined)?.name ?? 'Error';
  const fromDatabase = carriesDatabaseError(error);
  const code = text(e.code);
  const logged: LoggedError = {
    type,
    // A wrapper of a database error repeats its message: name the failure, not its data.
    message: fromDatabase
      ? `database error${code && /^[0-9A-Z]{5}$/.test(code) ? ` ${code}` : ''} (statement and values not logged)`
      : (text(e.message) ?? ''),
  };
  if (code) logged.code = code;
  const constraint = text(e.constraint_name) ?? text(e.constraint);
  if (constraint) logged.constraint = constraint;
  const table = text(e.table_name) ?? text(e.table);
  if (table) logged.table = table;
  const column = text(e.column_name) ?? text(e.column);
  if (column) logged.column = column;
  const routine = text(e.routine);
  if (routine) logged.routine = routine;
  if (e.cause !== undefined && depth < MAX_CAUSES) logged.cause = serializeError(e.cause, depth + 1, frames);
  return { ...logged, stack: (frames && framesOf(e.stack)) || '' };
}

/** What logs a request's failure: the request's own logger, so that its lines carry its `reqId`. */
export interface FailureLog {
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/**
 * Logs the cause of a request answered `status`, on the request's logger (`request.log`, never the
 * app's): its line then carries the `reqId` the client got as `Request-Id`. A 503 (the database
 * away or slow) is a warning as `<what> unavailable`; any other 5xx an error as `<what> failed`; a
 * refusal (4xx) is the client's, and the server's shutdown its own: only their request lines say so.
 */
export function logFailure(log: FailureLog, status: number, error: unknown, what: string): void {
  // The server's own shutdown refusing a request (or cutting a long poll off) is no failure: its
  // request line says 503, and a shutdown would otherwise warn once for every poll open.
  if (error instanceof ShuttingDownError) return;
  if (status === 503) log.warn({ err: error }, `${what} unavailable`);
  else if (status >= 500) log.error({ err: error }, `${what} failed`);
}

/**
 * How a background task's failure is logged (the event hub, MCP sessions, webhook deliveries):
 * the database away (restarted, failed over) is an outage the task rides out, a warning, where an
 * error paged an operator for a restart that heals itself; anything else is an error.
 */
export const backgroundFailure =
  (log: FailureLog, task: string) =>
  (error: unknown, what: string): void =>
    isDatabaseUnavailable(error)
      ? log.warn({ err: error }, `${task}: ${what}`)
      : log.error({ err: error }, `${task}: ${what}`);
