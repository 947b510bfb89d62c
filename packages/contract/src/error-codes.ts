import { z } from 'zod';

/**
 * One code of the table: the statuses it answers with and what it means. A generic code (marked
 * `generic`) is the one of its single status: what a body of that status says when nothing more
 * specific applies.
 */
type ErrorCodeEntry =
  | { status: readonly [number]; generic: true; meaning: string }
  | { status: readonly number[]; generic?: never; meaning: string };

/**
 * The `code` of every error body: a stable, machine-readable name of what went wrong, for a
 * client to branch on where the status alone lumps causes together (every 401 is not the same
 * 401). Each status has its generic code; a specific code replaces it where a caller would act
 * differently. Messages may change; codes do not. New codes may be added at any time (an additive
 * change): a client must treat a code it does not know as the generic code of its status.
 */
export const errorCodes = {
  // The generic code of each status the service answers.
  invalid_request: {
    status: [400],
    generic: true,
    meaning: 'the request is malformed or broke a limit (`issues` lists schema breaks)',
  },
  unauthorized: {
    status: [401],
    generic: true,
    meaning: 'the credential is missing, unknown or of the wrong kind',
  },
  forbidden: { status: [403], generic: true, meaning: 'the credential is valid but may not do this' },
  not_found: { status: [404], generic: true, meaning: 'nothing answers to this id or route' },
  not_acceptable: {
    status: [406],
    generic: true,
    meaning: 'the answer cannot be given in a media type the request accepts',
  },
  conflict: { status: [409], generic: true, meaning: 'the resource is not in a state that allows this' },
  gone: { status: [410], generic: true, meaning: 'the link request expired or was already used: start over' },
  payload_too_large: {
    status: [413],
    generic: true,
    meaning: 'the answer would be larger than the service computes',
  },
  idempotency_mismatch: {
    status: [422],
    generic: true,
    meaning: 'the Idempotency-Key was already used with another request body',
  },
  locked: { status: [423], generic: true, meaning: 'the artifact’s edit lock is not yours' },
  rate_limited: {
    status: [429],
    generic: true,
    meaning: 'too many requests: retry after `Retry-After` seconds',
  },
  internal_error: { status: [500], generic: true, meaning: 'the service failed: report the Request-Id' },
  unavailable: {
    status: [503],
    generic: true,
    meaning: 'the service cannot answer now: retry after `Retry-After` seconds',
  },
  // Specific causes.
  unsupported_api_version: {
    status: [400],
    meaning: 'the API-Version header names a version this server does not serve',
  },
  webhook_address_private: {
    status: [400],
    meaning:
      'the webhook URL’s host is a loopback, private or link-local address, which this server does not let webhooks reach (its operator may allow them: WEBHOOK_ALLOW_PRIVATE, WEBHOOK_ALLOW_NETWORKS)',
  },
  key_required: {
    status: [401],
    meaning: 'no key was sent (X-Private-Key, or the MCP `privateKey` argument)',
  },
  key_unknown: { status: [401], meaning: 'the key names nobody in this space' },
  wrong_key_type: {
    status: [401],
    meaning: 'the key is valid here but of a kind this operation does not take',
  },
  owner_key_required: { status: [401], meaning: 'only the owner key may do this' },
  participant_left: {
    status: [401, 404],
    meaning: 'the key’s participant left the space: join again for a new key',
  },
  participant_removed: { status: [401, 404], meaning: 'the owner removed (kicked) the key’s participant' },
  space_closed: { status: [401, 404, 409], meaning: 'the space was closed: its keys no longer work' },
  space_expired: { status: [401, 404, 409], meaning: 'the space outlived its TTL: its keys no longer work' },
  participant_muted: {
    status: [403],
    meaning: 'a muted participant cannot send messages, create or lock artifacts',
  },
  poll_token_required: {
    status: [401],
    meaning:
      'the owner decided on this join: its key goes only to the joiner presenting the join’s pollToken (X-Poll-Token, or the MCP `pollToken` argument)',
  },
  join_refused: { status: [404], meaning: 'the owner refused this join: no key will come of it' },
  join_key_collected: {
    status: [404],
    meaning:
      'the joiner’s key was already handed out: by the join’s own answer in a public space, or by a poll more than 10 minutes ago (a poll may collect it again only within them): use the key saved then, or join again',
  },
  participant_status_conflict: {
    status: [409],
    meaning:
      'the participant’s status does not allow this moderation; `participantStatus` is their current one',
  },
  version_conflict: {
    status: [409],
    meaning: 'writeArtifact’s `baseVersion` is not the current version; `version` is the current one',
  },
  limit_reached: {
    status: [409],
    meaning: 'the space holds as many participants, artifacts, bytes or webhooks as it may',
  },
  duplicate_request: {
    status: [409],
    meaning: 'a request with this Idempotency-Key is running or just ran: send it again for its answer',
  },
  lock_held: {
    status: [423],
    meaning: 'someone else holds the artifact’s lock (`lockedBy`, `lockedByName`, `lockExpiresAt`)',
  },
  lock_not_held: {
    status: [423],
    meaning: 'nobody holds the artifact’s lock: yours lapsed or was never taken; lock it first',
  },
  shutting_down: {
    status: [503],
    meaning:
      'the server is shutting down and did not run the request: retry shortly, or against another node',
  },
} as const satisfies Record<string, ErrorCodeEntry>;

export type TKnownErrorCode = keyof typeof errorCodes;

/** The generic codes: one per status the service answers. */
export type TGenericErrorCode = {
  [C in TKnownErrorCode]: (typeof errorCodes)[C] extends { generic: true } ? C : never;
}[TKnownErrorCode];

const knownErrorCodes = Object.keys(errorCodes) as [TKnownErrorCode, ...TKnownErrorCode[]];

/**
 * The codes a client says of itself, which no answer of the service carries: its errors that no
 * error status made. Not in the API's `KnownErrorCode` (the service never answers them); the SDK's
 * `KnownErrorCode` lists them beside the service's (ZClientKnownErrorCode).
 */
export const clientErrorCodes = {
  link_denied: {
    meaning:
      'the human refused the link request, which pollLink answers with a 200 (`status: "denied"`): the SDK’s `link.wait()` throws it as a LinkDeniedError',
  },
} as const satisfies Record<string, { meaning: string }>;

export type TClientErrorCode = keyof typeof clientErrorCodes;

/** The generic code of each status the service answers (the table's `generic` entries). */
export const genericErrorCodes: Readonly<Partial<Record<number, TGenericErrorCode>>> = Object.fromEntries(
  knownErrorCodes.flatMap((code) => {
    const entry: ErrorCodeEntry = errorCodes[code];
    return entry.generic ? [[entry.status[0], code as TGenericErrorCode]] : [];
  }),
);

/** The service's codes, one a line: `- \`code\` (statuses): meaning`. */
const serviceCodeLines = knownErrorCodes
  .map((code) => `- \`${code}\` (${errorCodes[code].status.join(', ')}): ${errorCodes[code].meaning}`)
  .join('\n');

/** The codes this version of the service answers with, for documentation and autocompletion. */
export const ZKnownErrorCode = z.enum(knownErrorCodes).meta({
  id: 'KnownErrorCode',
  description: `The codes the service answers with today:\n${serviceCodeLines}`,
});

/**
 * The codes a client of this version may meet: the service's, and a client's own
 * (clientErrorCodes). What the SDK prints as its `KnownErrorCode`, in the place of the API's.
 */
export const ZClientKnownErrorCode = z
  .enum([...knownErrorCodes, ...(Object.keys(clientErrorCodes) as TClientErrorCode[])])
  .meta({
    description: `The codes the service answers with today:\n${serviceCodeLines}\n\nAnd the SDK's own, which no answer carries:\n${Object.entries(
      clientErrorCodes,
    )
      .map(([code, { meaning }]) => `- \`${code}\`: ${meaning}`)
      .join('\n')}`,
  });

/**
 * Open on purpose: a known code or any other string, since codes are added without a new API
 * version. The SDK prints it as `KnownErrorCode | (string & {})`.
 */
export const ZErrorCode = z.union([ZKnownErrorCode, z.string()]).meta({
  id: 'ErrorCode',
  description:
    'A stable, machine-readable name of the cause (snake_case), to branch on instead of the message. Codes may be added at any time: treat one you do not know as the generic code of its status (`unauthorized` for a 401, …).',
});
export type TErrorCode = TKnownErrorCode | (string & {});
