import type { TKnownErrorCode } from '@convene/contract';

/**
 * The one error vocabulary of the domain. Core throws these; it never knows HTTP statuses.
 * The server maps `kind` to a status in exactly one place.
 */
export const errorKinds = [
  'VALIDATION',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'CONFLICT',
  'GONE',
  'IDEMPOTENCY_MISMATCH',
  'LOCKED',
  'RATE_LIMITED',
  'PAYLOAD_TOO_LARGE',
  'UNAVAILABLE',
] as const;
export type ErrorKind = (typeof errorKinds)[number];

/**
 * The specific `code` of an error body (the contract's errorCodes), set where the error is
 * thrown: only where a caller would act on the cause. Without one the server answers the generic
 * code of the status.
 */
export type SpecificCode = TKnownErrorCode;

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    /** Extra fields merged into the error body, e.g. `{ lockedBy }`. */
    readonly details: Record<string, unknown> = {},
    /** The body's `code` when the cause is worth telling apart; else the status's generic one. */
    readonly code?: SpecificCode,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export class ValidationError extends DomainError {
  constructor(message: string, details: Record<string, unknown> = {}, code?: SpecificCode) {
    super('VALIDATION', message, details, code);
  }
}

/** Missing, unknown or wrong-type credential. */
export class UnauthorizedError extends DomainError {
  constructor(message = 'a valid key for this space is required', code?: SpecificCode) {
    super('UNAUTHORIZED', message, {}, code);
  }
}

/** No key was presented at all: said where a key goes (REST: the header; MCP: the argument). */
export class KeyRequiredError extends UnauthorizedError {
  constructor(
    where = 'X-Private-Key',
    /** Where else the key may go, for a caller that cannot set the header (MCP: an argument). */
    hint?: string,
  ) {
    super(`${where} is required`, 'key_required');
    if (hint !== undefined) Object.assign(this.details, { hint });
  }
}

export class ForbiddenError extends DomainError {
  constructor(message: string, code?: SpecificCode) {
    super('FORBIDDEN', message, {}, code);
  }
}

export class NotFoundError extends DomainError {
  constructor(what: string, code?: SpecificCode) {
    super('NOT_FOUND', `${what} not found`, {}, code);
  }
}

/** No join of this invitation (and pollToken) waits under this id, nor ever did. */
export class NoPendingJoinError extends NotFoundError {
  constructor() {
    super('pending join request');
    this.message =
      'pending join request not found: no join of this invitation and pollToken waits under this id';
  }
}

/**
 * The participant's key was handed out already (`join_key_collected`): by getJoinStatus more than
 * its window ago (JOIN_KEY_WINDOW_MS), or by the join's own answer in a public space. Polling gives
 * nothing more: use the key saved then, or, if it was lost, join again.
 */
export class JoinKeyCollectedError extends NotFoundError {
  constructor() {
    super('pending join request', 'join_key_collected');
    this.message =
      'pending join request not found: its key was already handed out (by the join’s own answer in a public space, or by a poll more than 10 minutes ago): use the key saved then';
  }
}

/** A join the owner refused (kicked before approval): nothing more will come of it. */
export class JoinRefusedError extends NotFoundError {
  constructor() {
    super('join request', 'join_refused');
    this.message = 'join request refused: the owner turned it down';
  }
}

export class ConflictError extends DomainError {
  constructor(message: string, details: Record<string, unknown> = {}, code?: SpecificCode) {
    super('CONFLICT', message, details, code);
  }
}

/**
 * The 409 of an operation on a closed or expired space. Its message is the same either way
 * (decisions.md: `{error: "space is closed"}`); the code tells which.
 */
export class SpaceClosedError extends ConflictError {
  constructor(expired = false) {
    super('space is closed', {}, expired ? 'space_expired' : 'space_closed');
  }
}

/** A count a space may not exceed (participants, artifacts, artifact bytes, webhooks): 409. */
export class LimitReachedError extends ConflictError {
  constructor(message: string) {
    super(message, {}, 'limit_reached');
  }
}

export class GoneError extends DomainError {
  constructor(message: string) {
    super('GONE', message);
  }
}

export class ArtifactLockedError extends DomainError {
  constructor(
    readonly lockedBy: string | null,
    readonly lockExpiresAt: string | null,
    message = lockedBy
      ? 'artifact is locked by another participant'
      : 'you do not hold the lock on this artifact',
    /** The holder's name, beside their id: what an agent or a person says back. */
    readonly lockedByName?: string,
  ) {
    super(
      'LOCKED',
      message,
      lockedBy ? { lockedBy, lockExpiresAt, ...(lockedByName === undefined ? {} : { lockedByName }) } : {},
      lockedBy ? 'lock_held' : 'lock_not_held',
    );
  }
}

export class RateLimitedError extends DomainError {
  constructor(
    readonly retryAfterSeconds: number,
    message = 'rate limit exceeded',
  ) {
    super('RATE_LIMITED', message, { retryAfter: retryAfterSeconds });
  }
}

/** An answer that would be larger than the service computes (413). */
export class PayloadTooLargeError extends DomainError {
  constructor(message: string) {
    super('PAYLOAD_TOO_LARGE', message);
  }
}

export class IdempotencyMismatchError extends DomainError {
  constructor() {
    super('IDEMPOTENCY_MISMATCH', 'Idempotency-Key was already used with a different request body');
  }
}

/** The service cannot answer this now, but will shortly (503 with Retry-After). */
export class UnavailableError extends DomainError {
  constructor(message: string, code?: SpecificCode) {
    super('UNAVAILABLE', message, {}, code);
  }
}

/**
 * The server is closing and did not run the request (`shutting_down`): one arriving while it
 * closes, a long wait it cut off (whose answer would otherwise say that nothing came), a stream it
 * no longer opens. Its client retries shortly, or against another node, whatever the method.
 * Never thrown after a write: a wait that follows one answers what it has (longPoll's cutOff).
 */
export class ShuttingDownError extends UnavailableError {
  constructor() {
    super('the server is shutting down; retry shortly', 'shutting_down');
  }
}
