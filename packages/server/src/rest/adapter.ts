import type { Deps } from '@convene/core';
import type { FastifyInstance, FastifyRequest, onSendHookHandler } from 'fastify';
import { fastifyTRPCOpenApiPlugin } from 'trpc-to-openapi';
import { type HttpError, toHttpError } from '../http/errors';
import { withHints } from '../http/failure-hints';
import { logFailure } from '../http/log-errors';
import { type Context, createContextFactory } from '../trpc';
import type { routerOf } from './procedures';

/**
 * The procedures served at their REST paths by trpc-to-openapi. The adapter writes errors in a
 * shape of its own (`{message, code, issues}`); ours comes from the one mapping every route uses
 * (http/errors.ts), made once when the adapter reports the error and sent in its place.
 */
export function openApiAdapter(router: ReturnType<typeof routerOf>, deps: Deps, shutdown: AbortSignal) {
  const publicUrl = deps.config.publicUrl;
  const failures = new WeakMap<FastifyRequest, HttpError>();

  /**
   * Puts our error body in place of the adapter's; register it before anything reads bodies.
   * Synchronous on purpose: an onSend that yields lets Fastify send a second, empty answer for
   * handlers that call reply.send() without returning the reply (the adapter does).
   */
  const onSend: onSendHookHandler = (request, reply, payload, done) => {
    const failure = failures.get(request);
    // The adapter types every answer JSON, a 204's too, which has no content to type.
    if (!failure && reply.statusCode === 204) reply.removeHeader('content-type');
    done(null, failure ? JSON.stringify(failure.body) : payload);
  };

  const register = (app: FastifyInstance) =>
    app.register(fastifyTRPCOpenApiPlugin, {
      router,
      createContext: createContextFactory(deps, shutdown),
      responseMeta: ({ ctx, errors }: { ctx?: Context; errors: unknown[] }) => {
        if (errors.length > 0) {
          const { status, headers } = toHttpError(errors[0], publicUrl);
          return { status, headers };
        }
        return { status: ctx?.resMeta.status ?? 200, headers: ctx?.resMeta.headers ?? {} };
      },
      // Called once per failed request, before the answer is written (the request is Fastify's).
      onError: ({ error, req }: { error: { cause?: unknown }; req: FastifyRequest }) => {
        const failure = withHints(req, toHttpError(error, publicUrl));
        failures.set(req, failure);
        // On the request's logger, so that the cause carries the request's reqId.
        logFailure(req.log, failure.status, error.cause ?? error, 'procedure');
      },
    } as never);

  return { onSend, register };
}
