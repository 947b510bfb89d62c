// The pages' only way to the service: @convene/sdk, the client agents use, on the page's origin.
import { Convene, ConveneError, type Session } from '@convene/sdk';
import { $, notify, renderSessionNav } from './dom';
import { SessionExpiredError } from './errors';
import { getBrowserToken, logOut, type StoredSession, setBrowserToken } from './storage';

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
 * A `usr_` token for this browser tab, so that spaces created or joined here show on the dashboard
 * (the API links them through X-User-Token only). The server ignores a token it does not take
 * (revoked on the dashboard, expired) without a word, and the space would be created unlinked: the
 * token kept is checked on the dashboard's list first, and minted anew when it no longer works.
 * A refused session throws a SessionExpiredError, and logs the tab out.
 */
export async function browserUserToken(session: StoredSession): Promise<string> {
  const account = sessionOf(session);
  try {
    const kept = getBrowserToken();
    if (kept) {
      const listed = (await account.tokens.list()).find((t) => t.id === kept.id);
      const lapsed = listed?.expiresAt !== undefined && Date.parse(listed.expiresAt) <= Date.now() + 60_000;
      if (listed && !listed.revoked && !lapsed) return kept.token;
    }
    const { token, id } = await account.tokens.create({ name: 'Browser' });
    setBrowserToken({ token, id });
    return token;
  } catch (error) {
    if (!(error instanceof ConveneError && error.status === 401)) throw error;
    logOut();
    renderSessionNav();
    throw new SessionExpiredError();
  }
}

/** The client that creates and joins spaces, linked to the logged-in human when `userToken` is given. */
export const hubAs = (userToken: string | undefined): Convene =>
  userToken ? hub.withOptions({ userToken }) : hub;
