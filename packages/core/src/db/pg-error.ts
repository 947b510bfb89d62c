/** PostgreSQL's SQLSTATE of a deadlock victim. */
export const DEADLOCK_DETECTED = '40P01';
/** A lock wait that ran past `lock_timeout`. */
export const LOCK_NOT_AVAILABLE = '55P03';

/**
 * `run`, again when PostgreSQL picked it as a deadlock's victim (its transaction was rolled back
 * whole), `attempts` times in all.
 */
export async function retryOnDeadlock<T>(attempts: number, run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (sqlState(error) !== DEADLOCK_DETECTED || attempt >= attempts) throw error;
    }
  }
}

/** The SQLSTATE of a database error, however deep the driver wrapped it (drizzle, postgres.js). */
export function sqlState(error: unknown): string | undefined {
  for (let e: unknown = error; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** Driver and socket codes of a database connection that failed or could not be made. */
const CONNECTION_CODES = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  // Out of file descriptors (the process's, the system's): no connection can be opened until
  // some close, a shortage that passes, as a full pool's does.
  'EMFILE',
  'ENFILE',
]);

/** SQLSTATEs of a server that is going away, starting, overloaded or out of time. */
const UNAVAILABLE_STATES = new Set([
  '57P01', // admin_shutdown: a fast shutdown or restart ends the session
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or shutting down
  '53300', // too_many_connections
  '57014', // query_canceled: a statement timeout
  '25P03', // idle_in_transaction_session_timeout
  // A deadlock's victim, a serialization failure: the transaction was rolled back whole, and the
  // same request made again runs alone (where a use case does not retry it itself).
  DEADLOCK_DETECTED,
  '40001',
]);

/**
 * True when an error means the database could not be reached or could not answer in time,
 * rather than that the request was wrong: the caller answers 503 with Retry-After, and the client
 * retries. Connection exceptions (SQLSTATE class 08) are among them.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e: unknown = error; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (
      typeof code === 'string' &&
      (CONNECTION_CODES.has(code) || UNAVAILABLE_STATES.has(code) || code.startsWith('08'))
    )
      return true;
    const errno = (e as { errno?: unknown }).errno;
    if (typeof errno === 'string' && CONNECTION_CODES.has(errno)) return true;
    // A Unix socket's file is gone while its server is down (a DATABASE_URL naming a socket
    // directory): the connect's ENOENT is the TCP connection's ECONNREFUSED. No other ENOENT is.
    if (code === 'ENOENT' && (e as { syscall?: unknown }).syscall === 'connect') return true;
  }
  return false;
}
