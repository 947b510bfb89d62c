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
