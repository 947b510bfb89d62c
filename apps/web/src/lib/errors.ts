import { ConnectionError, ConveneError, RateLimitError } from '@convene/sdk';

/** The server's own words for an error answer (`{ error }`), else the SDK's message. */
function said(error: ConveneError): string {
  return typeof error.body?.error === 'string' ? error.body.error : error.message;
}

/** What a failure to reach the service says: a page that reaches it again takes the sentence back. */
export const UNREACHABLE = 'The service cannot be reached; check your connection and try again.';

/**
 * Why a key stopped working, when the server's code says (removed, left, the space closed or
 * expired): what happened, in the words the page uses when it sees it happen, rather than a list
 * of guesses. Undefined for any other refusal.
 */
export function keyEnded(error: unknown): string | undefined {
  switch (error instanceof ConveneError ? error.code : undefined) {
    case 'participant_removed':
      return 'The owner removed you from this space: your key no longer opens it.';
    case 'participant_left':
      return 'You left this space: your key no longer opens it. Open the invitation link again to rejoin.';
    case 'space_closed':
      return 'This space was closed by its owner, for good: nothing in it can be read or sent any more.';
    case 'space_expired':
      return 'This space has expired (it reached the end of its time), for good: nothing in it can be read or sent any more.';
    default:
      return undefined;
  }
}

/** A sentence a person can act on, for an error of a call about `what` ("this space"…). */
/** What a page says when the dashboard session is refused as it links a space to the human. */
export const SESSION_EXPIRED =
  'Your dashboard session has expired: log in again, or untick “Keep this space on my dashboard”.';

/**
 * The dashboard session was refused (401) while minting or checking the tab's token. The box that
 * asked for it is unticked: the tab is logged out, and the next submit goes without it.
 */
export class SessionExpiredError extends Error {
  constructor() {
    super(SESSION_EXPIRED);
    const box = document.getElementById('link-dashboard');
    if (box instanceof HTMLInputElement) box.checked = false;
  }
}

export function describeError(error: unknown, what = 'this space'): string {
  if (error instanceof SessionExpiredError) return error.message;
  if (error instanceof ConnectionError) return UNREACHABLE;
  if (!(error instanceof ConveneError) || error.status === undefined)
    return `Something went wrong: ${error instanceof Error ? error.message : String(error)}`;
  const ended = keyEnded(error);
  if (ended) return ended;
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

/**
 * What a join page says when its wait for approval ended with a refusal-like answer: the owner
 * refused (`join_refused`), the key was already handed out (`join_key_collected`: to another tab
 * or window of this join), or something else (another 404, a 401, a 409), said as it is. Servers
 * older than error codes are read by their words, as the SDK reads them.
 */
export function joinEnded(error: unknown): string {
  const code = error instanceof ConveneError ? error.code : undefined;
  const text = error instanceof ConveneError ? said(error) : '';
  if (code === 'join_refused' || (code === undefined && text.startsWith('join request refused')))
    return 'The owner did not let you in. Ask them for a new invitation if you think this is a mistake.';
  if (code === 'join_key_collected' || (code === undefined && text.includes('already handed out')))
    return 'This join was let in more than 10 minutes ago and its key went to another tab or window. Continue there, or open the invitation link again to join anew.';
  return `You were not let in. ${describeError(error, 'this invitation')}`;
}
