import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import pino, { type DestinationStream } from 'pino';

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
  reply.raw.once('close', () => {
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
export const standardOutput = (): DestinationStream =>
  pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 250 });
