import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { toHttpError } from './errors';

export const API_VERSION = '1';
export const SUPPORTED_API_VERSIONS = new Set([API_VERSION]);

export function sendError(
  reply: FastifyReply,
  status: number,
  body: { error: string } & Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  return reply.code(status).headers(headers).type('application/json; charset=utf-8').send(body);
}

/**
 * Cross-cutting HTTP policy applied once to every route, tRPC and raw alike: the API-Version
 * header, JSON bodies for every error (Fastify's own included), body-less writes, unknown routes.
 */
export function registerHttpPolicy(app: FastifyInstance, publicUrl: string): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('API-Version', API_VERSION);
    const requested = request.headers['api-version'];
    if (requested !== undefined && !SUPPORTED_API_VERSIONS.has(String(requested).trim())) {
      return sendError(reply, 400, {
        error: `unsupported API-Version "${String(requested)}"; supported: ${[...SUPPORTED_API_VERSIONS].join(', ')}`,
      });
    }
    // Body-less writes (approve, kick, invite, close…) need no content type.
    if (
      (request.method === 'POST' ||
        request.method === 'PUT' ||
        request.method === 'PATCH' ||
        request.method === 'DELETE') &&
      !request.headers['content-type'] &&
      !hasBody(request.headers)
    ) {
      request.headers['content-type'] = 'application/json';
    }
  });

  // An empty JSON body is an empty object; anything else must parse.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, {});
    try {
      done(null, JSON.parse(text));
    } catch {
      const error = new Error('request body is not valid JSON') as FastifyError;
      error.statusCode = 400;
      done(error, undefined);
    }
  });

  // trpc-to-openapi spreads the error formatter's shape into its own body; keep ours only.
  app.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode < 400 || typeof payload !== 'string' || !payload.includes('"convene"'))
      return payload;
    try {
      const parsed = JSON.parse(payload) as { convene?: unknown };
      return parsed.convene ? JSON.stringify(parsed.convene) : payload;
    } catch {
      return payload;
    }
  });

  app.setErrorHandler((error: FastifyError, _request, reply) => {
    if (
      error.validation ||
      error.code?.startsWith('FST_ERR_CTP') ||
      error.statusCode === 400 ||
      error.statusCode === 413
    ) {
      const status = error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? 415 : 400;
      const message =
        error.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? 'request body too large'
          : status === 415
            ? 'request bodies must be application/json'
            : error.message;
      return sendError(reply, status, { error: message });
    }
    const mapped = toHttpError(error, publicUrl);
    if (mapped.status >= 500) reply.log.error({ err: error }, 'unhandled error');
    return sendError(reply, mapped.status, mapped.body, mapped.headers);
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(reply, 404, { error: `no route for ${request.method} ${request.url.split('?')[0]}` }),
  );
}

function hasBody(headers: Record<string, unknown>): boolean {
  const length = headers['content-length'];
  return (length !== undefined && length !== '0') || headers['transfer-encoding'] !== undefined;
}
