// What the tab remembers: sessionStorage, gone when the tab closes, never sent anywhere. Keys
// live here and in the URL fragment, never in a page's address or query. A space key the human
// asks this device to remember is kept in localStorage too (every tab of the browser), until
// they forget it or the space ends for them; so is a join waiting for approval, until it is
// approved or refused, so that closing its tab does not lose it.
import type { User } from '@convene/sdk';

/** A space key this tab holds, and what it knows of whose it is. */
export interface SpaceCredentials {
  key: string;
  participantId?: string | undefined;
  role?: 'owner' | 'participant' | undefined;
  name?: string | undefined;
}

/**
 * An invitation being used, kept across reloads of /join while a private space's owner decides;
 * once a join waits (`participantId`), across closed tabs too.
 */
export interface Invitation {
  key: string;
  participantId?: string | undefined;
  /** The 202's pollToken: only this joiner's polls collect the key. */
  pollToken?: string | undefined;
  name?: string | undefined;
  /** When the space ends (ISO 8601): a waiting join kept past it is dropped unread. */
  expiresAt?: string | undefined;
}

/** The dashboard session: the JWT and the human it belongs to. */
export interface StoredSession {
  token: string;
  user: User;
  expiresAt?: string | undefined;
}

const spaceSlot = (spaceId: string) => `convene:space:${spaceId}`;
const inviteSlot = (spaceId: string) => `convene:invite:${spaceId}`;
const SESSION = 'convene:session';
const BROWSER_TOKEN = 'convene:user-token';

/** The stored object, if it is one with a string `field` (anything else was not written by us). */
function read(slot: string, field: string, device = false): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse((device ? localStorage : sessionStorage).getItem(slot) ?? 'null');
    if (
      parsed &&
      typeof parsed === 'object' &&
      typeof (parsed as Record<string, unknown>)[field] === 'string'
    )
      return parsed as Record<string, unknown>;
  } catch {
    // unreadable: as if nothing was kept
  }
  return undefined;
}

const write = (slot: string, value: unknown) => sessionStorage.setItem(slot, JSON.stringify(value));

/** The key this tab holds for a space, else the one this device remembers. */
export const getSpaceCredentials = (spaceId: string) =>
  (read(spaceSlot(spaceId), 'key') ?? read(spaceSlot(spaceId), 'key', true)) as SpaceCredentials | undefined;
export const isRemembered = (spaceId: string): boolean => Boolean(read(spaceSlot(spaceId), 'key', true));
export function setSpaceCredentials(spaceId: string, credentials: SpaceCredentials, remember = false): void {
  write(spaceSlot(spaceId), credentials);
  // What the tab learns of whose the key is, the device's copy learns too.
  if (remember || isRemembered(spaceId))
    localStorage.setItem(spaceSlot(spaceId), JSON.stringify(credentials));
}
/** Forgets the device's copy of a space key (`tab`: this tab's too). */
export function forgetSpaceCredentials(spaceId: string, tab = true): void {
  if (tab) sessionStorage.removeItem(spaceSlot(spaceId));
  try {
    localStorage.removeItem(spaceSlot(spaceId));
  } catch {
    // a browser that keeps nothing: nothing to forget
  }
}

/** The invitation this tab uses for a space, else the join this browser waits on there. */
export function getInvitation(spaceId: string): Invitation | undefined {
  const kept = read(inviteSlot(spaceId), 'key') as Invitation | undefined;
  if (kept) return kept;
  const waiting = read(inviteSlot(spaceId), 'participantId', true) as Invitation | undefined;
  if (waiting?.expiresAt && Date.parse(waiting.expiresAt) <= Date.now()) {
    forgetInvitation(spaceId);
    return undefined;
  }
  return typeof waiting?.key === 'string' ? waiting : undefined;
}

/** Keeps an invitation in this tab; a join that waits for approval, in the browser too. */
export function setInvitation(spaceId: string, invitation: Invitation): void {
  write(inviteSlot(spaceId), invitation);
  if (!invitation.participantId) return;
  try {
    localStorage.setItem(inviteSlot(spaceId), JSON.stringify(invitation));
  } catch {
    // a browser that keeps nothing: the wait lasts as long as the tab
  }
}

export function forgetInvitation(spaceId: string): void {
  sessionStorage.removeItem(inviteSlot(spaceId));
  try {
    localStorage.removeItem(inviteSlot(spaceId));
  } catch {
    // a browser that keeps nothing: nothing to forget
  }
}

/** The dashboard session, if logged in and not expired. */
export function getSession(): StoredSession | undefined {
  const session = read(SESSION, 'token') as StoredSession | undefined;
  if (!session) return undefined;
  if (session.expiresAt && Date.parse(session.expiresAt) <= Date.now()) {
    logOut();
    return undefined;
  }
  return session;
}

export const setSession = (session: StoredSession) => write(SESSION, session);

export function logOut(): void {
  sessionStorage.removeItem(SESSION);
  sessionStorage.removeItem(BROWSER_TOKEN);
}

/** The `usr_` token this tab minted, and its id: the dashboard lists it (revoked or not) by id. */
export interface BrowserToken {
  token: string;
  id: string;
}

/** The tab's token, if one was kept (one kept without its id, by an older page, is minted anew). */
export const getBrowserToken = () => {
  const kept = read(BROWSER_TOKEN, 'id');
  return typeof kept?.token === 'string' ? (kept as unknown as BrowserToken) : undefined;
};
export const setBrowserToken = (token: BrowserToken) => write(BROWSER_TOKEN, token);
