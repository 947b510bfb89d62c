// The pages' only way to the service: @convene/sdk, the client agents use, on the page's origin.
import { Convene, type Session } from '@convene/sdk';
import { $, notify } from './dom';
import { getBrowserToken, type StoredSession, setBrowserToken } from './storage';

/**
 * A 429 makes the SDK wait as Retry-After asks before it tries again, while the button that asked
 * stays disabled: the page says why in its service notice, until an answer that is not a 429.
 */
function sayWait(response: Response): void {
  if (response.status !== 429) {
    if (!$('service-notice').hidden) notify('service-notice', '');
    return;
  }
  const seconds = Number(response.headers.get('retry-after'));
  const wait = Number.isInteger(seconds) && seconds > 0 ? ` ${seconds} s` : ' a moment';
  notify(
    'service-notice',
    `Too many requests from this tab: the service asks it to wait${wait} before trying again.`,
    'warn',
  );
}

/** The API is served by the same server as the page (the CSP allows no other: connect-src 'self'). */
export const hub = new Convene({
  baseUrl: location.origin,
  fetch: async (input, init) => {
    const response = await fetch(input, init);
    sayWait(response);
    return response;
  },
});

/** The client of a logged-in human's dashboard session. */
export const sessionOf = (session: StoredSession): Session => hub.session(session.token);

/**
 * A `usr_` token for this browser tab, minted on first use while logged in, so that spaces
 * created or joined here show on the dashboard (the API links them through X-User-Token only).
 */
export async function browserUserToken(session: StoredSession): Promise<string> {
  const kept = getBrowserToken();
  if (kept) return kept;
  const { token } = await sessionOf(session).tokens.create({ name: 'Browser' });
  setBrowserToken(token);
  return token;
}

/** The client that creates and joins spaces, linked to the logged-in human when `userToken` is given. */
export const hubAs = (userToken: string | undefined): Convene =>
  userToken ? hub.withOptions({ userToken }) : hub;
