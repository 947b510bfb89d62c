// The pages' only way to the service: the same REST API agents use, with fetch.

/** An error answer of the API: its status and its `{ error, ...details }` body. */
export class ApiError extends Error {
  constructor(status, body, headers) {
    super(typeof body?.error === 'string' ? body.error : `the server answered ${status}`);
    this.status = status;
    this.body = body ?? {};
    this.headers = headers;
  }
}

function idempotencyKey() {
  if (globalThis.crypto?.randomUUID) return crypto.randomUUID();
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Calls the API. `key` goes in X-Private-Key, `bearer` (the dashboard JWT) in Authorization,
 * `userToken` in X-User-Token, `pollToken` in X-Poll-Token. Resolves to `{ status, body }` for any
 * 2xx; rejects with ApiError.
 */
export async function api(method, path, { key, bearer, userToken, pollToken, body, text = false } = {}) {
  const headers = { Accept: text ? 'text/plain, text/markdown, text/x-diff' : 'application/json' };
  if (key) headers['X-Private-Key'] = key;
  if (pollToken) headers['X-Poll-Token'] = pollToken;
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  if (userToken) headers['X-User-Token'] = userToken;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  // One key per logical write: a retry of the same call by the browser is then replayed, not redone.
  if (method !== 'GET') headers['Idempotency-Key'] = idempotencyKey();
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, { error: 'the service cannot be reached; check your connection and try again' });
  }
  const type = response.headers.get('content-type') ?? '';
  let parsed;
  if (response.status === 204) parsed = undefined;
  else if (type.includes('json')) parsed = await response.json().catch(() => undefined);
  else parsed = await response.text();
  if (!response.ok) throw new ApiError(response.status, parsed, response.headers);
  return { status: response.status, body: parsed, headers: response.headers };
}

/** A sentence a person can act on, for an error of a call about `what` ("this space"…). */
export function describeError(error, what = 'this space') {
  if (!(error instanceof ApiError)) return `Something went wrong: ${error?.message ?? error}`;
  const said = error.message;
  switch (error.status) {
    case 0:
      return `${said.charAt(0).toUpperCase()}${said.slice(1)}.`;
    case 400:
      return `That was not accepted: ${said}.`;
    case 401:
      return `Your key does not open ${what} (${said}). It may have been mistyped, or you left or were removed, or the space has closed.`;
    case 403:
      return `You cannot do that here: ${said}.`;
    case 404:
      return `Not found (${said}). The link may be mistyped, or ${what} no longer exists.`;
    case 409:
      return `Not possible right now: ${said}.`;
    case 410:
      return `This has expired: ${said}.`;
    case 423:
      return `Locked: ${said}.`;
    case 429: {
      const wait = error.headers?.get('retry-after');
      return `Too many requests. Try again${wait ? ` in ${wait} seconds` : ' in a moment'}.`;
    }
    default:
      return `The service failed (${error.status}): ${said}. Try again in a moment.`;
  }
}

// --- What the tab remembers (sessionStorage: gone when the tab closes, never sent anywhere) ----

const spaceSlot = (spaceId) => `convene:space:${spaceId}`;
const inviteSlot = (spaceId) => `convene:invite:${spaceId}`;
const SESSION = 'convene:session';
const BROWSER_TOKEN = 'convene:user-token';

function readJson(slot) {
  try {
    const raw = sessionStorage.getItem(slot);
    return raw ? JSON.parse(raw) : undefined;
  } catch {
    return undefined;
  }
}

/** `{ key, participantId?, role?: 'owner'|'participant', name? }` for a space, if this tab has it. */
export const getSpaceCredentials = (spaceId) => readJson(spaceSlot(spaceId));
export const setSpaceCredentials = (spaceId, credentials) =>
  sessionStorage.setItem(spaceSlot(spaceId), JSON.stringify(credentials));
export const forgetSpaceCredentials = (spaceId) => sessionStorage.removeItem(spaceSlot(spaceId));

/** `{ key, participantId?, statusUrl? }`: an invitation being used, kept across reloads of /join. */
export const getInvitation = (spaceId) => readJson(inviteSlot(spaceId));
export const setInvitation = (spaceId, invitation) =>
  sessionStorage.setItem(inviteSlot(spaceId), JSON.stringify(invitation));
export const forgetInvitation = (spaceId) => sessionStorage.removeItem(inviteSlot(spaceId));

/** The dashboard session `{ token, user, expiresAt }`, if logged in and not expired. */
export function getSession() {
  const session = readJson(SESSION);
  if (!session?.token) return undefined;
  if (session.expiresAt && Date.parse(session.expiresAt) <= Date.now()) {
    logOut();
    return undefined;
  }
  return session;
}

export const setSession = (session) => sessionStorage.setItem(SESSION, JSON.stringify(session));

export function logOut() {
  sessionStorage.removeItem(SESSION);
  sessionStorage.removeItem(BROWSER_TOKEN);
}

/**
 * A `usr_` token for this browser tab, minted on first use while logged in, so that spaces
 * created or joined here show on the dashboard (the API links them through X-User-Token only).
 */
export async function browserUserToken(session) {
  const kept = sessionStorage.getItem(BROWSER_TOKEN);
  if (kept) return kept;
  const { body } = await api('POST', '/hub/me/tokens', {
    bearer: session.token,
    body: { name: 'Browser' },
  });
  sessionStorage.setItem(BROWSER_TOKEN, body.token);
  return body.token;
}
