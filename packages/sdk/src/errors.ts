import type { ErrorBody, ErrorCode, ParticipantView, ValidationIssue } from './generated';

/** Where each error class's prototype holds its kind: the same symbol in every copy of the SDK. */
const KIND = Symbol.for('@convene/sdk:error-kind');

/** The kind a prototype itself was marked with (not one it inherits). */
const kindOf = (prototype: object): unknown =>
  Object.hasOwn(prototype, KIND) ? (prototype as Record<symbol, unknown>)[KIND] : undefined;

/** `value instanceof Class`, or an instance of the same kind of class from another copy of the SDK. */
function isInstance(Class: { prototype: object }, value: unknown): boolean {
  if (Function.prototype[Symbol.hasInstance].call(Class, value)) return true;
  const kind = kindOf(Class.prototype);
  if (kind === undefined || typeof value !== 'object' || value === null) return false;
  for (let proto = Object.getPrototypeOf(value); proto !== null; proto = Object.getPrototypeOf(proto))
    if (kindOf(proto) === kind) return true;
  return false;
}

/**
 * Marks error classes with their kinds, for `instanceof` across copies of the SDK (ConveneError):
 * a class's kind is the `name` its errors carry, read from one made here.
 */
export function markErrorKinds(...classes: (new (message: string, init: never) => Error)[]): void {
  for (const Class of classes)
    Object.defineProperty(Class.prototype, KIND, {
      value: `@convene/sdk:${new Class('', {} as never).name}`,
    });
}

/** The field `name` of an error's body when it is of `type` (`typeof`), else undefined. */
function bodyField<T>(init: ErrorInit, name: string, type: 'string' | 'number' = 'string'): T | undefined {
  const value = (init.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === type ? (value as T) : undefined;
}

/** What an error is made of. */
export interface ErrorInit {
  status?: number | undefined;
  body?: ErrorBody | undefined;
  headers?: Headers | undefined;
  cause?: unknown;
  operation?: string | undefined;
  method?: string | undefined;
  url?: string | undefined;
  mayHaveRun?: boolean | undefined;
}

/**
 * Everything the SDK throws. An answer with an error status becomes the subclass of its status
 * (`LockedError` for 423, …) carrying the status, the JSON body `{error, code, ...details}`, the headers
 * and the request id; a request that got no answer is a `ConnectionError`, `TimeoutError` or
 * `AbortError`, whose `status` is undefined.
 */
export class ConveneError extends Error {
  override name = 'ConveneError';

  /**
   * `instanceof` also recognises the errors of the package's other build: an application that
   * loads the SDK both with `import` and with `require` holds two copies of every class, and an
   * error thrown by one copy must still be a `LockedError` to code that imported the other. Each
   * class of this module marks its prototype with its kind under a global symbol (see the end of
   * the module); a user's own subclass matches only itself, as usual.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: the class asked about, LockedError as much as ConveneError
    return isInstance(this, value);
  }
  /** The HTTP status of the answer; undefined when none came. */
  declare readonly status: number | undefined;
  /** The JSON error body, `{ error, code, ...details }`. */
  declare readonly body: ErrorBody | undefined;
  /**
   * What went wrong, for code to branch on (`body.code`): `participant_left`, `space_closed`,
   * `lock_held`… (`KnownErrorCode` lists them), or the generic code of the status
   * (`unauthorized`, `conflict`…). Unlike the message, it does not change. A later server may
   * answer a code this SDK does not know: treat it as the status's generic one. Undefined when
   * the answer had none (a proxy's HTML page); for a ConnectionError, the system's error code.
   */
  declare readonly code: ErrorCode | undefined;
  declare readonly headers: Headers | undefined;
  /** The server's request id (`Request-Id` header), to quote when reporting a problem. */
  declare readonly requestId: string | undefined;
  /**
   * The `Idempotency-Key` a write was sent with (the SDK's own, or yours); undefined for a read
   * and for the writes the server never replays (`spaces.create`, `link.start`, the anonymous
   * ones), whose retry acts again. After a failure that leaves it unknown whether the server ran
   * the write (a ConnectionError, a TimeoutError, a 5xx), call again with `{ idempotencyKey:
   * error.idempotencyKey }`: the server replays the first answer if it ran it, and runs it once
   * if it did not.
   */
  declare readonly idempotencyKey: string | undefined;
  /**
   * The call that failed, as the API reference names its operation (`getSpace`), its HTTP method
   * and the URL it was sent to (the client's baseUrl and the operation's path, ids filled in, no
   * `user:password`); undefined for an error no request made (a bad argument, a webhook's).
   */
  declare readonly operation: string | undefined;
  declare readonly method: string | undefined;
  declare readonly url: string | undefined;
  /**
   * Whether the server may have run the call, on any of its attempts, though it failed: an
   * attempt went out and got no answer (a ConnectionError, a TimeoutError, your signal ending it
   * while it was out) or a 5xx, even when a later attempt was refused (a 429 after a dropped
   * connection, say). False when no attempt can have run: a 4xx alone, a connection refused. Decide
   * on this, not on the class, whether a write needs checking before it is sent again (with
   * `idempotencyKey`, the server replays it instead of running it twice).
   */
  declare readonly mayHaveRun: boolean;

  constructor(message: string, init: ErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.body = init.body;
    this.code = bodyField(init, 'code');
    this.headers = init.headers;
    this.requestId = init.headers?.get('request-id') ?? init.headers?.get('x-request-id') ?? undefined;
    this.idempotencyKey = undefined;
    this.operation = init.operation;
    this.method = init.method;
    this.url = init.url;
    this.mayHaveRun = init.mayHaveRun ?? false;
  }

  /**
   * What `JSON.stringify` shows: the name, the message (not an enumerable field of an Error, so
   * otherwise left out), the status, body, request id and a subclass's details (`lockedBy`,
   * `retryAfter`…). Not the headers, which would show as `{}`.
   */
  toJSON(): Record<string, unknown> {
    const { headers: _, name, message, ...fields } = this;
    return { name, message, ...fields };
  }
}

/**
 * 400: the request was malformed or broke a limit; `body.error` says which field, and `issues`
 * lists each value that broke the request's schema, for a form to mark its fields.
 */
export class BadRequestError extends ConveneError {
  override name = 'BadRequestError';
  declare readonly status: 400;
  /**
   * Each value at fault and why, when the request broke its schema or named what is not there
   * (`body.issues`): `path` names it in the request (`['content']`, `['mentions', 0]` for a
   * mention of someone not in the space). Undefined for the other refusals (a header, a limit of
   * the whole request), which `body.error` alone explains.
   */
  declare readonly issues: ValidationIssue[] | undefined;

  constructor(message: string, init: ErrorInit) {
    super(message, init);
    this.issues = Array.isArray(init.body?.issues) ? init.body.issues : undefined;
  }
}
/** 401: the key or token is missing, unknown, revoked, or of the wrong kind for this call. */
export class AuthenticationError extends ConveneError {
  override name = 'AuthenticationError';
  declare readonly status: 401;
}
/** 403: a valid key, but not allowed (for example a muted participant sending). */
export class PermissionDeniedError extends ConveneError {
  override name = 'PermissionDeniedError';
  declare readonly status: 403;
}
/**
 * 404: no such space, participant, artifact, version, webhook or link request (a wrong id, or one
 * deleted). Also a join the owner refused (`join request refused: …`) and a pending join whose key
 * was already handed out more than 10 minutes ago (`check()`, `wait()`).
 */
export class NotFoundError extends ConveneError {
  override name = 'NotFoundError';
  declare readonly status: 404;
}
/**
 * 409: a state conflict (a closed space, a participant already active, a write whose
 * `baseVersion` is no longer current: then `version` is the current one). Never retried.
 */
export class ConflictError extends ConveneError {
  override name = 'ConflictError';
  declare readonly status: 409;
  /** The artifact's current version, when a write's `baseVersion` was not (`body.version`). */
  declare readonly version: number | undefined;
  /**
   * The participant's current status, when a moderation does not fit it (`participant_status_conflict`:
   * muting someone not active, approving someone not waiting…).
   */
  declare readonly participantStatus: ParticipantView['status'] | undefined;

  constructor(message: string, init: ErrorInit) {
    super(message, init);
    this.version = bodyField(init, 'version', 'number');
    this.participantStatus = bodyField(init, 'participantStatus');
  }
}
/** 410: a link request that expired or was already used: start over. */
export class GoneError extends ConveneError {
  override name = 'GoneError';
  declare readonly status: 410;
}
/** 422: an Idempotency-Key reused with a different request. */
export class UnprocessableError extends ConveneError {
  override name = 'UnprocessableError';
  declare readonly status: 422;
}
/**
 * 423: you do not hold the artifact's edit lock. Someone else holds it (`lockedBy`), or, on a write,
 * a heartbeat or a restore, nobody does (`lockedBy` undefined: yours lapsed, or was never taken).
 * Never retried as a failed request is: `lock` and `withLock` wait for the lock instead when given
 * `waitMs`, and throw the last LockedError when that time is up. A `withLock` while another
 * `withLock` of the same key and artifact runs in this process is refused by the SDK without a
 * request (`requestId` undefined): `lockedBy` is then your own participantId, when a client of the
 * key knows it.
 */
export class LockedError extends ConveneError {
  override name = 'LockedError';
  declare readonly status: 423;
  /** The participantId holding the lock, when someone does. */
  declare readonly lockedBy: string | undefined;
  /** That holder's name (names need not be unique: `lockedBy` is who it is). */
  declare readonly lockedByName: string | undefined;
  /** When that lock lapses unless its holder refreshes it. */
  declare readonly lockExpiresAt: string | undefined;
  /**
   * When a `withLock` document's `write` or `reload` found its lock lost: the artifact's version
   * then, read after the refusal, and who saved it. A `version` above the document's own says
   * someone saved since; the message says it too. Undefined on any other LockedError.
   */
  declare readonly version: number | undefined;
  declare readonly updatedBy: string | undefined;

  constructor(message: string, init: ErrorInit) {
    super(message, init);
    this.lockedBy = bodyField(init, 'lockedBy');
    this.lockedByName = bodyField(init, 'lockedByName');
    this.lockExpiresAt = bodyField(init, 'lockExpiresAt');
  }
}

function retryAfterSeconds(headers: Headers | undefined): number | undefined {
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

/**
 * 429: too many requests from this client; retried after `retryAfter` seconds unless retries ran
 * out. Its message says that wait too (`429 rate limit exceeded (retry after 3 s)`), unless the
 * server's words already say when.
 */
export class RateLimitError extends ConveneError {
  override name = 'RateLimitError';
  declare readonly status: 429;
  /** Seconds to wait before trying again (the `Retry-After` header); undefined without one. */
  declare readonly retryAfter: number | undefined;

  constructor(message: string, init: ErrorInit) {
    super(message, init);
    this.retryAfter = retryAfterSeconds(init.headers);
  }
}
/**
 * 500 and other 5xx but 503. Retried, except for the writes the server cannot replay:
 * `spaces.create`, `link.start`, and the anonymous `pollLink`, `signup`, `login` and `ask`
 * (README, "Retries, idempotency and timeouts"). A join is replayed to the address and user
 * token it came from, so it is retried.
 */
export class InternalServerError extends ConveneError {
  override name = 'InternalServerError';
}
/**
 * 503: the service cannot answer now (its database is unreachable, or the request ran too long).
 * With a Retry-After, its message says when to try again, as a RateLimitError's does.
 */
export class ServiceUnavailableError extends ConveneError {
  override name = 'ServiceUnavailableError';
  declare readonly status: 503;
  /** Seconds to wait before trying again (the `Retry-After` header); undefined without one. */
  declare readonly retryAfter: number | undefined;

  constructor(message: string, init: ErrorInit) {
    super(message, init);
    this.retryAfter = retryAfterSeconds(init.headers);
  }
}

/**
 * What a request that got no answer was: its call (ErrorInit), and the system's error code. Its
 * `mayHaveRun` is false when the request certainly never reached the server; the default is true.
 */
export interface ConnectionErrorInit extends ErrorInit {
  code?: string | undefined;
}

/**
 * The request got no answer: the connection failed or was dropped. Its message is the network's
 * reason, then the operation and the URL it was sent to (`connect ECONNREFUSED 127.0.0.1:3000
 * (sendMessage: POST http://localhost:3000/hub/space/…/messages)`).
 */
export class ConnectionError extends ConveneError {
  override name = 'ConnectionError';
  declare readonly status: undefined;
  /**
   * The code the runtime's fetch gives the failure, as it gives it (Node and Bun): `ECONNREFUSED`,
   * `ENOTFOUND`, `ECONNRESET`, and in Node also its fetch's own `UND_ERR_SOCKET` (the server closed
   * the connection before answering, as when it is killed mid-request; Bun says `ECONNRESET`) and
   * other `UND_ERR_…` codes. Not a closed list, and not whether the request ran: `mayHaveRun` says
   * that. Always undefined in Deno and in a browser (whose fetch rejects every network failure,
   * CORS included, with the same bare `TypeError: Failed to fetch`).
   */
  override readonly code: string | undefined;
  /**
   * Whether the server may have run the request, on any of its attempts: false only when every
   * attempt certainly never reached it (the connection was refused, the name did not resolve) or
   * was refused unrun (a 408, a 429, or the 503 of a server shutting down).
   * Decide on this, not on `code`, whether a write needs sending again: the last attempt may have
   * been refused after an earlier one was cut off with the request sent. Only a runtime whose
   * fetch gives the system's code (Node, Bun) can tell a refusal: in a browser it is always true.
   */
  declare readonly mayHaveRun: boolean;

  /**
   * `init` may be another ConnectionError (the stream names its first connection's failure so):
   * read, not copied, as a copy would lose its `cause`, which is not enumerable.
   */
  constructor(message: string, init: ConnectionErrorInit = {}) {
    super(message, init);
    this.mayHaveRun = init.mayHaveRun ?? true;
    this.code = init.code;
  }
}
/** The request got no answer within `timeoutMs`. */
export class TimeoutError extends ConnectionError {
  override name = 'TimeoutError';
}
/** The caller's AbortSignal ended the request. */
export class AbortError extends ConveneError {
  override name = 'AbortError';
  declare readonly status: undefined;
}
/**
 * Whether `error` is the SDK's error of an answer with one of `statuses`: the subclass of each
 * (`LockedError` for 423…), whose class the status alone decides.
 */
export const hasStatus = (error: unknown, ...statuses: number[]): boolean =>
  error instanceof ConveneError && statuses.includes(error.status!);

/**
 * Whether another attempt may well succeed: no answer came (the connection failed, was dropped or
 * timed out), or a 5xx (a restarting server, its database away). For the loops that wait on the
 * server for a long time, such as a join's wait for approval, which poll again after it.
 */
export function isTransient(error: unknown): boolean {
  // A status undefined is no 5xx.
  return error instanceof ConnectionError || (error instanceof ConveneError && error.status! >= 500);
}

/** The human refused the link request (`link.wait()`): `code` `link_denied`. */
export class LinkDeniedError extends ConveneError {
  override name = 'LinkDeniedError';
  /** The SDK's own code, not the server's: the poll that tells the refusal is a 200. */
  override readonly code = 'link_denied';
}

/** What an UnlockError is made of. */
export interface UnlockErrorInit<T> extends ErrorInit {
  artifactId: string;
  outcome: PromiseSettledResult<T>;
  lockExpiresAt: string;
}

/**
 * `withLock` ended without knowing the lock released: every unlock failed (the server away, its
 * database down) until your `signal` aborted, or the server refused the unlock for a reason that
 * does not say the lock is gone. The lock may still be yours until `lockExpiresAt`, and others
 * get a LockedError naming you until then. `outcome` is what the callback did (its value, or the
 * error it threw); `cause` is the last unlock's error. `withLock` never rejects with it once the
 * lock is known gone: unlocked, taken by someone else, lapsed, or the key or space ended.
 */
export class UnlockError<T = unknown> extends ConveneError {
  override name = 'UnlockError';
  declare readonly status: undefined;
  declare readonly artifactId: string;
  /** The callback's outcome: `{ status: 'fulfilled', value }` or `{ status: 'rejected', reason }`. */
  declare readonly outcome: PromiseSettledResult<T>;
  /** When the lock lapses at the latest unless something refreshes it (this machine's clock). */
  declare readonly lockExpiresAt: string;

  constructor(message: string, init: UnlockErrorInit<T>) {
    super(message, { cause: init.cause });
    this.artifactId = init.artifactId;
    this.outcome = init.outcome;
    this.lockExpiresAt = init.lockExpiresAt;
  }
}

// At the top level on purpose, unlike the clients' inspect hooks (showAs): `instanceof` must
// recognise another build's error before any error of this class was made here. It keeps the
// error classes (a few kB minified) in every bundle that uses one of them, and nothing else.
markErrorKinds(
  ConveneError,
  BadRequestError,
  AuthenticationError,
  PermissionDeniedError,
  NotFoundError,
  ConflictError,
  GoneError,
  UnprocessableError,
  LockedError,
  RateLimitError,
  InternalServerError,
  ServiceUnavailableError,
  ConnectionError,
  TimeoutError,
  AbortError,
  LinkDeniedError,
  UnlockError,
);

const byStatus: Record<number, new (message: string, init: ErrorInit) => ConveneError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  410: GoneError,
  422: UnprocessableError,
  423: LockedError,
  429: RateLimitError,
  503: ServiceUnavailableError,
};

/** The error of an answer with an error status. */
export function errorFromResponse(status: number, headers: Headers, text: string): ConveneError {
  let body: ErrorBody | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as ErrorBody;
  } catch {
    // not JSON (a proxy's HTML page): its words become the message (answerWords)
  }
  const detail = typeof body?.error === 'string' ? body.error : answerWords(text);
  const Class = byStatus[status] ?? (status >= 500 ? InternalServerError : ConveneError);
  return new Class(`${status} ${detail}`, { status, body, headers });
}

/**
 * An answer that is not Convene's JSON (a proxy's page) in a line of words: its text without tags
 * or line breaks, at most 200 characters.
 */
function answerWords(text: string): string {
  const words = text
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return words.length > 200 ? `${words.slice(0, 199)}…` : words || 'no error message';
}

export { retryAfterSeconds };
