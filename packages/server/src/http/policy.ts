import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { ValidationError } from '@convene/core';
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { missingCredential } from '../operations/declare';
import { restCredentials } from '../rest/caller';
import { OPENAPI_WILDCARD, operationOf } from '../rest/route-table';
import { errorBody } from './error-body';
import { NOT_JSON_BODY, toHttpError } from './errors';
import { noRouteFor, withHints } from './failure-hints';
import { drainRequest, isJsonObject, jsonBodyProblem, NUL_PROBLEM, urlHasNul } from './json-body';
import { logFailure } from './log-errors';
import { ABSOLUTE_FORM } from './redact';
import { sendError } from './reply';

/**
 * A request target as the routes and policies read it (Fastify's `rewriteUrl`, before routing):
 * one in absolute form (`GET http://host/path`, which HTTP/1.1 servers must take, RFC 9112
 * 3.2.2) is its origin form, `/path`. Routed by its path already, it was read whole elsewhere: its
 * operation's credentials, and so its rate-limit bucket, were not found, nor its Idempotency-Key
 * scope, so that a retry in the other form ran again. The log still shows the target as sent
 * (`originalUrl`, redacted).
 */
export function originForm(request: { url?: string | undefined }): string {
  const url = request.url ?? '/';
  // The everyday target: origin form (or `*`).
  if (url.charCodeAt(0) === 47 || url === '*') return url;
  const origin = ABSOLUTE_FORM.exec(url)?.[0];
  if (origin === undefined) return url;
  const rest = url.slice(origin.length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/**
 * What every request needs before its body is read (run by the one onRequest hook, app.ts):
 * body-less writes get a JSON content type, and HEAD on a procedure runs as the GET it mirrors.
 */
export function normaliseRequest(request: FastifyRequest): void {
  const method = request.method;
  // HTTP/1.1 requires a Host (RFC 9112 3.2); HTTP/1.0 may leave it out.
  const { httpVersionMajor, httpVersionMinor } = request.raw;
  if (httpVersionMajor === 1 && httpVersionMinor >= 1 && request.headers.host === undefined)
    throw new ValidationError('the Host header is required (HTTP/1.1)');
  // U+0000 in a path segment or a query value: no text field may hold it.
  if (urlHasNul(request.url)) throw new ValidationError(NUL_PROBLEM);
  // Body-less writes (approve, kick, invite, close…) need no content type, and an empty body
  // is no body whatever type it names (`curl -d ''` names a form): a write that needs one then
  // says which field is missing.
  if (
    (method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE') &&
    !hasBody(request.headers)
  ) {
    request.headers['content-type'] = 'application/json';
  }
  // Media types are case-insensitive (RFC 9110 8.3.1); the OpenAPI adapter compares them as
  // written, so `Application/JSON` would be refused there and accepted by the raw routes.
  const type = request.headers['content-type'];
  if (type && type !== type.toLowerCase()) request.headers['content-type'] = lowerMediaType(type);
  // Fastify answers HEAD on raw GET routes itself; the OpenAPI adapter would answer a bare 204
  // without running the procedure. Run it as the GET it mirrors: Node drops the body of a HEAD.
  if (method === 'HEAD' && request.routeOptions.url === OPENAPI_WILDCARD) {
    request.raw.method = 'GET';
    servedAsGet.add(request.raw);
  }
}

/** HEAD requests run as the GET they mirror (normaliseRequest). */
const servedAsGet = new WeakSet<IncomingMessage>();

/**
 * An onSend hook: a HEAD run as its GET is a HEAD again once its answer is made, so that Fastify
 * sends the GET's Content-Length (RFC 9110 8.6), where it would say 0 for a GET without a body.
 */
export function restoreHead(request: FastifyRequest): void {
  if (servedAsGet.has(request.raw)) request.raw.method = 'HEAD';
}

/** The one route whose body may be a JSON array (a JSON-RPC batch). */
const MCP_ROUTE = '/mcp';

/** Whether a Content-Type names UTF-8 or no charset at all (JSON's is UTF-8). */
function isUtf8Charset(contentType: string | undefined): boolean {
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(contentType ?? '')?.[1]?.toLowerCase();
  return charset === undefined || charset === 'utf-8' || charset === 'utf8';
}

const badBody = (message: string): FastifyError => {
  const error = new Error(message) as FastifyError;
  error.statusCode = 400;
  return error;
};

/**
 * Request bodies and error answers, for every route, tRPC and raw alike: JSON parsing; the one
 * error handler, which answers whatever a route throws (domain errors, validation failures,
 * Fastify's own) as JSON through http/errors.ts; unknown routes. The version, rate-limit and
 * idempotency policies are their own hooks (see app.ts).
 */
export function registerHttpPolicy(app: FastifyInstance, publicUrl: string): void {
  // An empty JSON body is an empty object; anything else must parse, be an object (every
  // operation's body is one; /mcp also takes a JSON-RPC batch), nest at most 64 levels and hold
  // no U+0000, before any layer below (tRPC, zod, the MCP SDK) sees it. Fastify's own text/plain
  // parser goes too: a text body then gets the 415 of every other type (answered 400
  // NOT_JSON_BODY below) on every route, where the raw and direct ones received it as a string.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    // JSON between systems is UTF-8 (RFC 8259): a body in another charset, or with bytes that are
    // no UTF-8, would be stored with U+FFFD where the client's text was.
    if (!isUtf8Charset(request.headers['content-type']))
      return done(badBody('request bodies must be JSON in UTF-8 (charset=utf-8)'), undefined);
    if (!isUtf8(body as Buffer)) return done(badBody('request body is not valid UTF-8'), undefined);
    const text = (body as Buffer).toString('utf8');
    if (text.trim() === '') return done(null, {});
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return done(badBody('request body is not valid JSON'), undefined);
    }
    const mcp = request.routeOptions.url === MCP_ROUTE;
    const problem = jsonBodyProblem(value, mcp ? toolArguments(value) : undefined);
    if (problem) return done(badBody(problem), undefined);
    const batch = Array.isArray(value) && mcp;
    if (!isJsonObject(value) && !batch) return done(badBody('request body must be a JSON object'), undefined);
    // JSON-RPC 2.0: an empty batch is an invalid request (the MCP transport would answer it 202).
    if (batch && (value as unknown[]).length === 0)
      return done(badBody('a JSON-RPC batch must hold at least one call'), undefined);
    done(null, value);
  });

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const answer = (thrown: unknown) => {
      const mapped = withHints(request, toHttpError(thrown, publicUrl));
      logFailure(reply.log, mapped.status, thrown, 'request');
      return sendError(reply, mapped.status, mapped.body, mapped.headers);
    };
    // Answered before the client has finished sending: read the rest first, or the client may
    // see its connection reset instead of the answer.
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') await drainRequest(request.raw);
    if (
      !(
        error.validation ||
        error.code?.startsWith('FST_ERR_CTP') ||
        error.statusCode === 400 ||
        error.statusCode === 413 ||
        error.statusCode === 415
      )
    )
      return answer(error);
    // A body refused before its operation ran, from a caller with none of the operation's
    // credentials: that is said first (401), as when the body is good (requireCredential).
    const operation = operationOf(request);
    const missing = operation && missingCredential(operation, restCredentials(request));
    if (missing) return answer(missing);
    // Every refused body is a 400, the one status the specification gives to bad requests.
    const message =
      error.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
        ? 'request body too large (limit 2 MiB)'
        : error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || error.statusCode === 415
          ? NOT_JSON_BODY
          : error.message;
    return sendError(reply, 400, { error: message });
  });

  app.setNotFoundHandler((request, reply) => {
    const { status, body } = withHints(request, {
      status: 404,
      body: errorBody(404, noRouteFor(request)),
      headers: {},
    });
    return sendError(reply, status, body);
  });
}

/**
 * The arguments of each tools/call in an /mcp body: U+0000 there is the tool's own 400 (a tool
 * result, as every other invalid argument), so that the client reads it as that call's answer and
 * the other calls of a batch still run. Anywhere else in the body it is the HTTP 400.
 */
function toolArguments(body: unknown): Set<unknown> {
  const found = new Set<unknown>();
  for (const message of Array.isArray(body) ? body : [body]) {
    const { method, params } = (message ?? {}) as { method?: unknown; params?: { arguments?: unknown } };
    if (method === 'tools/call' && params?.arguments && typeof params.arguments === 'object')
      found.add(params.arguments);
  }
  return found;
}

/** The type and subtype in lower case; parameters (a boundary may be case-sensitive) as sent. */
function lowerMediaType(value: string): string {
  const semicolon = value.indexOf(';');
  return semicolon < 0
    ? value.toLowerCase()
    : value.slice(0, semicolon).toLowerCase() + value.slice(semicolon);
}

function hasBody(headers: Record<string, unknown>): boolean {
  const length = headers['content-length'];
  return (length !== undefined && length !== '0') || headers['transfer-encoding'] !== undefined;
}
