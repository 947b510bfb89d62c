import { and, eq, isNull } from 'drizzle-orm';
import { users } from '../db/schema';
import type { Deps } from '../deps';
import { UnauthorizedError } from '../errors';
import { isUuid, newId } from '../ids';
import type { SessionIdentity } from './sessions';
import { normalizeEmail, type UserRow } from './views';

/** What a `/hub/me/*` request without a dashboard JWT is told (401). */
export const SESSION_REQUIRED =
  'a dashboard session is required: send Authorization: Bearer <jwt> from POST /hub/auth/login';

/**
 * The human behind a dashboard JWT, for `/hub/me/*`. A `usr_` API token never stands in for it,
 * whether sent as the bearer or as X-User-Token: it proves only an agent's link to a human.
 */
export async function authenticateHuman(deps: Deps, bearer: string | undefined): Promise<UserRow> {
  const user = await humanFromSession(deps, bearer);
  if (user) return user;
  if (!bearer) throw new UnauthorizedError(SESSION_REQUIRED);
  throw new UnauthorizedError(
    bearer.startsWith('usr_')
      ? 'a usr_ API token cannot open a dashboard session: send the dashboard JWT'
      : 'the dashboard session is invalid or has expired: log in again',
  );
}

/** The human a dashboard JWT names, or null when it proves nothing. */
export async function humanFromSession(deps: Deps, bearer: string | undefined): Promise<UserRow | null> {
  if (!bearer || bearer.startsWith('usr_')) return null;
  const identity = await deps.sessions.verify(bearer, deps.clock.now());
  if (!identity) return null;
  if (identity.kind === 'external') return findOrCreateExternalHuman(deps, identity);
  if (!isUuid(identity.userId)) return null;
  const [user] = await deps.db.select().from(users).where(eq(users.id, identity.userId));
  return user ?? null;
}

/**
 * A human of a trusted external OpenID Connect issuer: found by `sub`, else by a (not
 * unverified) email not yet linked to another subject, else created on first sight.
 */
async function findOrCreateExternalHuman(
  deps: Deps,
  identity: Extract<SessionIdentity, { kind: 'external' }>,
): Promise<UserRow | null> {
  const { db, clock } = deps;
  const bySubject = async () =>
    (await db.select().from(users).where(eq(users.externalSubject, identity.subject)))[0];
  const known = await bySubject();
  if (known) return known;

  const email = identity.email ? normalizeEmail(identity.email) : undefined;
  if (email) {
    const [linked] = await db
      .update(users)
      .set({ externalSubject: identity.subject })
      .where(and(eq(users.email, email), isNull(users.externalSubject)))
      .returning();
    if (linked) return linked;
  }
  // The column is unique and required: a subject without a usable email, or whose email already
  // belongs to another account, gets a reserved-TLD stand-in.
  const standIn = `${encodeURIComponent(identity.subject)}@${new URL(identity.issuer).hostname}.invalid`;
  for (const candidate of email ? [email, standIn] : [standIn]) {
    const [created] = await db
      .insert(users)
      .values({
        id: newId(),
        email: candidate,
        name: identity.name ?? email?.split('@')[0] ?? '',
        passwordHash: null,
        externalSubject: identity.subject,
        createdAt: clock.now(),
      })
      .onConflictDoNothing()
      .returning();
    if (created) return created;
    // A concurrent first request may have created it meanwhile.
    const raced = await bySubject();
    if (raced) return raced;
  }
  return null;
}
