import { type SQL, sql } from 'drizzle-orm';
import { rowsOf } from '../db/migrate';
import type { Executor } from '../db/types';

/** Credentials looked up in the database before they count as a client of their own. */
export type StoredCredentialKind = 'space-key' | 'user-token';

/**
 * Whether `lookup` (the SHA-256 of a credential, as keys and tokens are stored) names a credential
 * that works at `at`: a space key of a live participant or an invitation of an open, unexpired
 * space; a user token that is neither revoked nor expired. One or two primary-key probes.
 */
export const liveCredentialSql = (kind: SQL, lookup: SQL, at: SQL): SQL => sql`(
  (${kind} = 'space-key' and (
    exists (select 1 from participants p join spaces s on s.id = p.space_id
      where p.key_hash = ${lookup} and p.status in ('active', 'muted')
        and s.state = 'open' and s.expires_at > ${at})
    or exists (select 1 from invitations v join spaces s on s.id = v.space_id
      where v.key_hash = ${lookup} and s.state = 'open' and s.expires_at > ${at})))
  or (${kind} = 'user-token' and exists (select 1 from api_tokens t
      where t.token_hash = ${lookup} and t.revoked_at is null and t.expires_at > ${at}))
)`;

/** liveCredentialSql as one query, where no batched statement can carry it (in-process counters). */
export async function isLiveCredential(
  ex: Executor,
  kind: StoredCredentialKind,
  lookup: string,
  at: Date,
): Promise<boolean> {
  const rows = rowsOf<{ live: boolean }>(
    await ex.execute(
      sql`select ${liveCredentialSql(sql`${kind}::text`, sql`${lookup}::text`, sql`${at.toISOString()}::timestamptz`)} as live`,
    ),
  );
  return rows[0]?.live === true;
}
