import type { TErrorCode, TKnownErrorCode } from '@convene/contract';

/**
 * The generic `code` of each status (the contract's errorCodes): what an error body says when
 * nothing more specific was thrown, including the framework's own refusals.
 */
export function genericCodeOf(status: number): TKnownErrorCode {
  switch (status) {
    case 400:
      return 'invalid_request';
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 406:
      return 'not_acceptable';
    case 409:
      return 'conflict';
    case 410:
      return 'gone';
    case 413:
      return 'payload_too_large';
    case 422:
      return 'idempotency_mismatch';
    case 423:
      return 'locked';
    case 429:
      return 'rate_limited';
    case 503:
      return 'unavailable';
    default:
      return status >= 500 ? 'internal_error' : 'invalid_request';
  }
}

/** An error body: `{error, code, ...details}`. */
export type ErrorBody = { error: string; code: TErrorCode } & Record<string, unknown>;

/** The body of an error answer: its message, its code (the status's generic one unless given) and details. */
export const errorBody = (
  status: number,
  error: string,
  { code, ...details }: { code?: TErrorCode | undefined } & Record<string, unknown> = {},
): ErrorBody => ({ error, code: code ?? genericCodeOf(status), ...details });
