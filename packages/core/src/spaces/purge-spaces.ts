import { sql } from 'drizzle-orm';
import { rowsOf } from '../db/migrate';
import type { Db } from '../db/types';

export interface PurgeSpacesOptions {
  db: Db;
  now: Date;
  /** How long a closed or expired space is kept (for the dashboard) before it is deleted. */
  retentionSeconds: number;
  /** Spaces deleted at most in this call. */
  limit?: number;
}

/** Every table that holds a space's rows, children first. */
const SPACE_TABLES = [
  'inbox_entries',
  'send_budgets',
  'webhook_deliveries',
  'webhooks',
  'mcp_subscriptions',
  'messages',
  'space_events',
  'artifact_versions',
  'artifacts',
  'invitations',
  'participants',
];

/**
 * Deletes spaces closed or expired more than the retention period ago, with everything they
 * hold, in one transaction per call: storage does not grow with spaces nobody can use any more.
 * Spaces another node is purging at the same moment are skipped (SKIP LOCKED). Returns how many
 * spaces were deleted.
 */
export async function purgeSpaces({
  db,
  now,
  retentionSeconds,
  limit = 50,
}: PurgeSpacesOptions): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionSeconds * 1000).toISOString();
  return db.transaction(async (tx) => {
    const ids = rowsOf<{ id: string }>(
      await tx.execute(sql`
        select id from spaces
        where expires_at < ${cutoff}::timestamptz
           or (closed_at is not null and closed_at < ${cutoff}::timestamptz)
        limit ${limit}
        for update skip locked`),
    ).map((row) => row.id);
    if (ids.length === 0) return 0;
    const list = sql`array[${sql.join(
      ids.map((id) => sql`${id}::uuid`),
      sql`, `,
    )}]`;
    for (const table of SPACE_TABLES) {
      await tx.execute(sql`delete from ${sql.identifier(table)} where space_id = any(${list})`);
    }
    await tx.execute(sql`delete from spaces where id = any(${list})`);
    return ids.length;
  });
}
