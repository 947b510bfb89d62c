import type { TSessionResult, TTokenMetadata, TUserView } from '@convene/contract';
import type { apiTokens, users } from '../db/schema';
import type { Deps } from '../deps';

export type UserRow = typeof users.$inferSelect;
export type ApiTokenRow = typeof apiTokens.$inferSelect;

/** The public face of an account: never the password hash or the external subject. */
export const toUserView = (row: UserRow): TUserView => ({
  id: row.id,
  email: row.email,
  name: row.name,
  createdAt: row.createdAt.toISOString(),
});

/** Token metadata for lists: the secret and its hash never leave the database. */
export const toTokenMetadata = (row: ApiTokenRow): TTokenMetadata => ({
  id: row.id,
  name: row.name,
  prefix: row.prefix,
  createdAt: row.createdAt.toISOString(),
  ...(row.lastUsedAt ? { lastUsedAt: row.lastUsedAt.toISOString() } : {}),
  revoked: row.revokedAt !== null,
  expiresAt: row.expiresAt.toISOString(),
});

/** Signs a dashboard JWT for a built-in account. */
export async function openSession(deps: Deps, user: UserRow): Promise<TSessionResult> {
  const { token, expiresAt } = await deps.sessions.issue(
    { id: user.id, email: user.email, name: user.name },
    deps.clock.now(),
  );
  return { token, user: toUserView(user), expiresAt: expiresAt.toISOString() };
}

/** Emails are case-insensitive: stored and looked up lower-cased. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();
