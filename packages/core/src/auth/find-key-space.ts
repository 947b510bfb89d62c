import { sql } from 'drizzle-orm';
import { rowsOf } from '../db/migrate';
import type { Deps } from '../deps';
import { hashSecret } from '../secrets';
import type { KeyRole } from './authorize';

/**
 * The space a key belongs to, for a transport whose requests do not name the space (A2A's
 * service endpoint): keys are scoped to one space, so the key says which. Whether the key may do
 * anything there is authorize's question, asked by the use case called next.
 */
export async function findKeySpace({
  deps,
  key,
}: {
  deps: Deps;
  key: string | undefined;
}): Promise<{ spaceId: string; role: KeyRole } | undefined> {
  if (!key) return undefined;
  const hash = hashSecret(key);
  const [row] = rowsOf<{ space_id: string; role: KeyRole }>(
    await deps.db.execute(sql`
      select p.space_id, case when p.is_owner then 'owner' else 'participant' end as role
      from participants p where p.key_hash = ${hash}
      union all
      select v.space_id, 'invitation' from invitations v where v.key_hash = ${hash}
      limit 1`),
  );
  return row ? { spaceId: row.space_id, role: row.role } : undefined;
}
