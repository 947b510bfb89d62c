import { ConnectionError, ConveneError, RateLimitError } from '@convene/sdk';

/** The server's own words for an error answer (`{ error }`), else the SDK's message. */
function said(error: ConveneError): string {
  return typeof error.body?.error === 'string' ? error.body.error : error.message;
}

/** What a failure to reach the service says: a page that reaches it again takes the sentence back. */
export const UNREACHABLE = 'The service cannot be reached; check your connection and try again.';

/** A sentence a person can act on, for an error of a call about `what` ("this space"…). */
export function describeError(error: unknown, what = 'this space'): string {
  if (error instanceof ConnectionError) return UNREACHABLE;
  if (!(error instanceof ConveneError) || error.status === undefined)
    return `Something went wrong: ${error instanceof Error ? error.message : String(error)}`;
  const text = said(error);
  switch (error.status) {
    case 400:
      return `That was not accepted: ${text}.`;
    case 401:
      return `Your key does not open ${what} (${text}). It may have been mistyped, or you left or were removed, or the space has closed.`;
    case 403:
      return `You cannot do that here: ${text}.`;
    case 404:
      return `Not found (${text}). The link may be mistyped, or ${what} no longer exists.`;
    case 409:
      return `Not possible right now: ${text}.`;
    case 410:
      return `This has expired: ${text}.`;
    case 423:
      return `Locked: ${text}.`;
    case 429: {
      const wait = error instanceof RateLimitError ? error.retryAfter : undefined;
      return `Too many requests. Try again${wait === undefined ? ' in a moment' : ` in ${Math.ceil(wait)} seconds`}.`;
    }
    default:
      return `The service failed (${error.status}): ${text}. Try again in a moment.`;
  }
}

/** The HTTP status of an error answer, if it was one. */
export const statusOf = (error: unknown): number | undefined =>
  error instanceof ConveneError ? error.status : undefined;
