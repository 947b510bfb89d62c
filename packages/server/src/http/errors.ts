import { issueField, type TValidationIssue } from '@convene/contract';
import { DomainError, type ErrorKind, isDatabaseUnavailable } from '@convene/core';
import { TRPCError } from '@trpc/server';
import { type ErrorBody, errorBody } from './error-body';
import { RETRY_AFTER_SECONDS } from './timeout';

/** tRPC's refusal of a path or method no procedure serves, before the request names it (failure-hints.ts). */
export const NO_SUCH_ROUTE = 'no such route';

/** The answer to a body of another content type than JSON, on every route (400, not 415). */
export const NOT_JSON_BODY = 'request bodies must be application/json';

/** The one mapping from the domain's error vocabulary to HTTP statuses. */
export function statusOf(kind: ErrorKind): number {
  switch (kind) {
    case 'VALIDATION':
      return 400;
    case 'UNAUTHORIZED':
      return 401;
    case 'FORBIDDEN':
      return 403;
    case 'NOT_FOUND':
      return 404;
    case 'CONFLICT':
      return 409;
    case 'GONE':
      return 410;
    case 'PAYLOAD_TOO_LARGE':
      return 413;
    case 'IDEMPOTENCY_MISMATCH':
      return 422;
    case 'LOCKED':
      return 423;
    case 'RATE_LIMITED':
      return 429;
    case 'UNAVAILABLE':
      return 503;
  }
}

export interface HttpError {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
}

/** Where the WWW-Authenticate discovery header points (RFC 9728). */
export const wwwAuthenticate = (publicUrl: string): string =>
  `Bearer resource_metadata="${publicUrl}/.well-known/oauth-protected-resource"`;

/** Turns anything thrown into the status, `{error, code, ...details}` body and headers it answers. */
export function toHttpError(thrown: unknown, publicUrl: string): HttpError {
  const cause = thrown instanceof TRPCError && thrown.cause ? thrown.cause : thrown;
  if (cause instanceof DomainError) {
    const status = statusOf(cause.kind);
    const headers: Record<string, string> = {};
    if (status === 401) headers['WWW-Authenticate'] = wwwAuthenticate(publicUrl);
    if (cause.kind === 'RATE_LIMITED') headers['Retry-After'] = String(cause.details.retryAfter);
    if (cause.kind === 'UNAVAILABLE') {
      headers['Retry-After'] = String(RETRY_AFTER_SECONDS);
      // The server is going away: its client must not reuse the connection, and the close, which
      // waits for connections busy when it began, need not wait for the client to drop it.
      headers.Connection = 'close';
    }
    return {
      status,
      body: errorBody(status, cause.message, { ...cause.details, code: cause.code }),
      headers,
    };
  }
  if (
    (cause instanceof Error && cause.name === '$ZodError') ||
    (cause as { name?: string })?.name === 'ZodError'
  ) {
    const issues = (cause as unknown as { issues: { path: PropertyKey[]; message: string }[] }).issues;
    // Each issue names its field: readable messages do themselves (issueField), the others after it.
    const summary = issues.map(({ path, message }) => {
      const field = issueField(path);
      return !path.length || message.startsWith(`${field} `) ? message : `${field}: ${message}`;
    });
    // The contract's shape (ZError's `issues`): a symbol key, which JSON cannot carry, as its name.
    const listed = issues.map(
      ({ path, message }): TValidationIssue => ({
        path: path.map((key) => (typeof key === 'symbol' ? String(key) : key)),
        message,
      }),
    );
    return {
      status: 400,
      body: errorBody(400, `invalid request: ${summary.join('; ')}`, { issues: listed }),
      headers: {},
    };
  }
  if (thrown instanceof TRPCError) {
    switch (thrown.code) {
      case 'NOT_FOUND':
        return { status: 404, body: errorBody(404, NO_SUCH_ROUTE), headers: {} };
      case 'BAD_REQUEST':
      case 'PARSE_ERROR':
      case 'PAYLOAD_TOO_LARGE':
        return { status: 400, body: errorBody(400, thrown.message || 'bad request'), headers: {} };
      // The specification's statuses only: a wrong content type is a bad request, a method a
      // path does not serve names nothing.
      case 'UNSUPPORTED_MEDIA_TYPE':
        return { status: 400, body: errorBody(400, NOT_JSON_BODY), headers: {} };
      case 'METHOD_NOT_SUPPORTED':
        return { status: 404, body: errorBody(404, NO_SUCH_ROUTE), headers: {} };
      default:
        break;
    }
  }
  // The database cannot be reached or cannot answer in time: the client retries (decisions.md,
  // Abuse and faults), never a 500.
  if (isDatabaseUnavailable(cause))
    return {
      status: 503,
      body: errorBody(
        503,
        'the service is briefly unavailable (its database cannot be reached); retry shortly',
      ),
      headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
    };
  // 5xx never leak internals.
  return { status: 500, body: errorBody(500, 'internal error'), headers: {} };
}
