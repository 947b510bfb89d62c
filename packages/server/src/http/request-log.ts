import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import pino from 'pino';

/**
 * One log line per request, written when it ends: the request (redacted, see redact.ts), the
 * status and the time taken, as an access log has them. Fastify's default is two lines, `incoming
 * request` and `request completed`; the first stays at debug level. Every request gets its line,
 * from one place (`logWhenDone`), whether it was answered, taken over (event streams, MCP), or cut
 * off by its client (`request aborted`). Half the log lines of a busy server: at 16 connections,
 * request logging cost ~50 µs of server CPU per request with two lines.
 */
export class RequestLog extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  /** Fastify calls this only for answers it sent itself; `logWhenDone` writes the line for all. */
  override requestCompleted(
    error: Error | null | undefined,
    _request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error) reply.log.error({ err: error }, 'response failed');
  }
}

/**
 * Writes the request's one line once its response is closed (sent, or cut off). Called first
 * thing for every request: by the onRequest hook, and by the handler of URLs Fastify cannot route.
 */
export function logWhenDone(request: FastifyRequest, reply: FastifyReply): void {
  // 'close' comes once: `on`, as `once` would hold a wrapper of its own as long as the response
  // (an event stream's: hours).
  reply.raw.on('close', () => {
    const finished = reply.raw.writableFinished;
    request.log.info(
      {
        req: request,
        res: { statusCode: reply.raw.headersSent ? reply.raw.statusCode : undefined },
        responseTime: reply.elapsedTime,
      },
      finished ? 'request completed' : 'request aborted',
    );
  });
}

/**
 * Where the server logs by default: standard output, written in chunks of 4 KiB (a dozen request
 * lines) and at least every 250 ms, rather than one write per line. What is pending when the
 * process exits, even on an uncaught exception, is written then (pino flushes on exit); only a
 * kill -9 can lose lines, at most 250 ms of them.
 */
export const standardOutput = (): ReturnType<typeof pino.destination> =>
  pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 250 });

/** The fields of a log line that the text format shows. */
interface LogLine {
  time?: number;
  level?: number;
  msg?: string;
  req?: { method?: string; url?: string };
  res?: { statusCode?: number };
  responseTime?: number;
  err?: { type?: string; message?: string };
}

const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/**
 * One log line as a person reads it in a terminal: `14:03:07  200  POST /hub/space  4 ms` for a
 * request, `14:03:07  WARN  <message>: <error>` for anything else. The same fields as the JSON
 * line (redacted alike); colours only where `color` says.
 */
export function formatLogLine(json: string, color: boolean): string {
  let line: LogLine;
  try {
    line = JSON.parse(json) as LogLine;
  } catch {
    return json.trimEnd();
  }
  const paint = (code: number, text: string) => (color ? `\u001b[${code}m${text}\u001b[39m` : text);
  const dim = (text: string) => (color ? `\u001b[2m${text}\u001b[22m` : text);
  const time = dim(new Date(line.time ?? Date.now()).toTimeString().slice(0, 8));
  const level = line.level ?? 30;
  if (line.req && line.responseTime !== undefined) {
    const status = line.res?.statusCode;
    const code = status === undefined ? '---' : String(status);
    const shown =
      status === undefined || status >= 500
        ? paint(31, code)
        : status >= 400
          ? paint(33, code)
          : paint(32, code);
    const took = `${line.responseTime < 10 ? line.responseTime.toFixed(1) : Math.round(line.responseTime)} ms`;
    const aborted = line.msg === 'request aborted' ? ' (client went away)' : '';
    return `${time}  ${shown}  ${line.req.method ?? ''} ${line.req.url ?? ''}  ${dim(took)}${aborted}`;
  }
  const name = LEVELS[level] ?? String(level);
  const label = level >= 50 ? paint(31, name) : level >= 40 ? paint(33, name) : name;
  const cause = line.err?.message ? `: ${line.err.message}` : '';
  return `${time}  ${label}  ${line.msg ?? ''}${cause}`;
}

/** A log destination writing each line as `formatLogLine` shows it. */
export const textOutput = (
  out: { write(text: string): unknown },
  color: boolean,
): { write(line: string): void } => ({
  write: (json) => {
    for (const line of json.split('\n')) if (line.trim() !== '') out.write(`${formatLogLine(line, color)}\n`);
  },
});

/** A message the logger drops (UNANNOUNCED): never written, at any level. */
const UNLOGGED = '\u0000convene:unlogged';

/**
 * `listen` options that keep Fastify from logging its own `Server listening at <address>` line,
 * one per address: `serve` prints the readiness line once, in its own words.
 */
export const UNANNOUNCED = { listenTextResolver: () => UNLOGGED };

/**
 * The logger's `logMethod` hook: drops the lines whose message is UNLOGGED, writes the others as
 * they are.
 */
export function dropUnlogged(this: pino.Logger, args: Parameters<pino.LogFn>, method: pino.LogFn): void {
  if (args[0] === UNLOGGED) return;
  method.apply(this, args);
}
