import type { ServerResponse } from 'node:http';
import type { WriteDeadline } from '@convene/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendError, whenTakenOver } from './reply';

/** Seconds a client is told to wait before retrying a 503 (a timeout, or the database away). */
export const RETRY_AFTER_SECONDS = 2;

const timedOut = new WeakSet<FastifyRequest>();

/**
 * True once the request has been answered 503 for taking too long: its handler must not commit
 * what it was doing (a guarded write's transaction rolls back), and its late answer is dropped.
 */
export const hasTimedOut = (request: FastifyRequest): boolean => timedOut.has(request);

/** Requests whose write went out on its own (WriteDeadline.committing): answered when it is. */
const committing = new WeakSet<FastifyRequest>();

/**
 * The request's deadline, as a write that commits on its own keeps it (core's WriteDeadline). A
 * class, whose methods are made once: closures made per request are each renamed under tsx
 * (`keepNames`), which `pnpm start` runs the server through; so is stopTimer a function of its own.
 */
class RequestDeadline implements WriteDeadline {
  constructor(private readonly request: FastifyRequest) {}

  abandoned(): boolean {
    return timedOut.has(this.request);
  }

  committing(): void {
    committing.add(this.request);
  }
}

export const writeDeadline = (request: FastifyRequest): WriteDeadline => new RequestDeadline(request);

/**
 * How long beyond the request timeout a long poll may take: the `wait` (seconds, at most 60) a
 * GET asks for. The contract validates the value; here it only stretches the timer.
 */
export function declaredWaitMs(request: FastifyRequest): number {
  if (request.method !== 'GET') return 0;
  const wait = Number((request.query as { wait?: unknown } | undefined)?.wait);
  return Number.isFinite(wait) && wait > 0 ? Math.min(wait, 60) * 1000 : 0;
}

/**
 * A request that cannot finish in `ms` answers 503 `{error}` with Retry-After (decisions.md,
 * Abuse and faults), whatever it waits on: a database that does not answer, a lock, a pool with
 * no free connection; one whose body has not all arrived by then answers 408, the client's delay.
 * Streams and long waits (`/mcp`'s wait_for_messages) take their reply over
 * (takeOver), which stops the timer; a route whose config says `longWait: true` has none.
 */
export function startRequestTimer(request: FastifyRequest, reply: FastifyReply, ms: number): void {
  if ((request.routeOptions.config as { longWait?: boolean } | undefined)?.longWait) return;
  const timer = setTimeout(() => {
    if (reply.sent || reply.raw.headersSent) return;
    // A 503 would say that it did not happen while it may still commit: the database answers.
    if (committing.has(request)) {
      request.log.warn(
        { timeoutMs: ms },
        'request timed out while its write was committing: it answers when it commits',
      );
      return;
    }
    timedOut.add(request);
    // A body still arriving is the client's delay, not the service's: 408, as Node's own for
    // headers that trickle (http/client-error.ts), no Retry-After. It is read no further: the
    // connection closes once the answer is out, or Node's own deadline, a second later, answered
    // the same request again (a raw 408). Its handler never ran (Fastify reads the body first).
    if (!request.raw.complete) {
      request.log.info({ timeoutMs: ms }, 'request body did not arrive in time');
      reply.header('Connection', 'close');
      reply.raw.once('finish', () => request.raw.socket?.destroy());
      sendError(reply, 408, { error: 'the request did not arrive in time' });
      return;
    }
    request.log.warn({ timeoutMs: ms }, 'request timed out');
    sendError(
      reply,
      503,
      { error: `the request could not be completed within ${Math.round(ms / 1000)} s; retry it` },
      { 'Retry-After': String(RETRY_AFTER_SECONDS) },
    );
  }, ms);
  timer.unref();
  const { raw } = reply;
  timers.set(raw, timer);
  raw.on('close', stopTimer);
  raw.on('finish', stopTimer);
  whenTakenOver(reply, () => stopTimer.call(raw));
}

/** Each response's request timer, for stopTimer. */
const timers = new WeakMap<ServerResponse, NodeJS.Timeout>();

/** Stops a response's request timer: its listener of 'close' and 'finish' (`this`, the response). */
function stopTimer(this: ServerResponse): void {
  clearTimeout(timers.get(this));
  this.off('close', stopTimer);
  this.off('finish', stopTimer);
}
