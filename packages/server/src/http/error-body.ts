import { genericErrorCodes, type TErrorCode, type TKnownErrorCode } from '@convene/contract';

/**
 * The generic `code` of each status (the contract's `genericErrorCodes`, the table's generic
 * entries): what an error body says when nothing more specific was thrown, including the
 * framework's own refusals. A status the table has none for is a failure (5xx) or a bad request.
 */
export function genericCodeOf(status: number): TKnownErrorCode {
  return genericErrorCodes[status] ?? (status >= 500 ? 'internal_error' : 'invalid_request');
}

/** An error body: `{error, code, ...details}`. */
export type ErrorBody = { error: string; code: TErrorCode } & Record<string, unknown>;

/** The body of an error answer: its message, its code (the status's generic one unless given) and details. */
export const errorBody = (
  status: number,
  error: string,
  { code, ...details }: { code?: TErrorCode | undefined } & Record<string, unknown> = {},
): ErrorBody => ({ error, code: code ?? genericCodeOf(status), ...details });

/**
 * The code of an error body stored without one: an idempotency record written before codes
 * existed (2026-11-26; records are replayed 24 h) answers with the code it would have now. The
 * specific one where its details name it (they were the same then: a lock's holder, the current
 * version, a participant's status), else the generic one of its status: a message is not read.
 */
export function codeOfUncoded(status: number, details: Record<string, unknown>): TKnownErrorCode {
  if (status === 423) return details.lockedBy ? 'lock_held' : 'lock_not_held';
  if (status === 409 && 'version' in details) return 'version_conflict';
  // Such records named the participant's status `status` (`participantStatus` since).
  if (status === 409 && 'status' in details) return 'participant_status_conflict';
  return genericCodeOf(status);
}

/** A stored JSON error body as it is answered today: with its code (codeOfUncoded when it had none). */
export function withCode(status: number, stored: string): string {
  if (status < 400) return stored;
  let body: unknown;
  try {
    body = JSON.parse(stored);
  } catch {
    return stored;
  }
  if (typeof body !== 'object' || body === null || 'code' in body) return stored;
  const { error, ...details } = body as { error?: unknown } & Record<string, unknown>;
  if (typeof error !== 'string') return stored;
  return JSON.stringify(errorBody(status, error, { ...details, code: codeOfUncoded(status, details) }));
}
