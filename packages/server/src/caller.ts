import type { Deps, IdempotencyGuard, PendingCount, WriteDeadline } from '@convene/core';

/**
 * Who calls an operation, as every transport hands it to a use case: the ports and the
 * credentials presented. REST reads them from headers, MCP from tool arguments and the
 * connection's headers; a use case never sees a request.
 */
export interface Caller {
  deps: Deps;
  /** The space key (X-Private-Key, the `privateKey` tool argument). */
  key: string | undefined;
  /** A usr_ user token (X-User-Token, the `userToken` tool argument): identity only. */
  userToken: string | undefined;
  /** The dashboard JWT (Authorization: Bearer). */
  bearer: string | undefined;
  /** A private-space join's pollToken (X-Poll-Token, the `pollToken` tool argument). */
  pollToken?: string | undefined;
  /**
   * Whom the request counts against as an address (its bucket, http/client.ts): work shared out
   * per client in this process (password hashing and webhook host lookups: core's WorkGate). Absent where unknown.
   */
  client?: string | undefined;
  /**
   * What the operation's `prepare` step found before any transaction opened (declare.ts): a
   * webhook's URL, its host looked up. Absent for operations without one.
   */
  prepared?: unknown;
  /**
   * The Idempotency-Key record of a REST write whose use case records it in its own statement
   * (OperationDeclaration.recordsIdempotency); absent everywhere else.
   */
  idempotency?: IdempotencyGuard | undefined;
  /**
   * The request's count against the rate limit, left to a use case that counts it in its own
   * statement (OperationDeclaration.countsRateLimit, REST only); absent everywhere else.
   */
  rateLimit?: PendingCount | undefined;
  /**
   * Aborted when the client goes away or the server shuts down: long polls (`wait`) end then.
   * Absent where nothing waits.
   */
  signal?: AbortSignal | undefined;
  /** The request's deadline (REST's 30 s), for a write that commits on its own. Absent elsewhere. */
  deadline?: WriteDeadline | undefined;
}
