import { sql } from 'drizzle-orm';
import { arrayLiteral } from '../db/array-literal';
import { rowsOf } from '../db/migrate';
import type { Executor } from '../db/types';

/** How long one renewal of a stream lease lasts, in seconds of the database's clock. */
export const STREAM_LEASE_SECONDS = 60;

export interface LeasedSpace {
  spaceId: string;
  /** The space's last event id when the lease was written. */
  eventSeq: number;
}

/**
 * Marks spaces as listened to for the next STREAM_LEASE_SECONDS (`spaces.streamed_until`), so
 * that their messages NOTIFY the nodes. A node calls it before a new listener of a space reads
 * its starting position, and again, for every space it still listens to, well before the lease
 * ends. Updating the space row serialises with a sending statement's update of the same row: a
 * message either commits first (the listener's snapshot, taken after this commits, has it) or
 * sees the lease and notifies. Returns each space's last event id, for the caller to notice
 * events it missed.
 */
export async function leaseStreams(ex: Executor, spaceIds: readonly string[]): Promise<LeasedSpace[]> {
  if (spaceIds.length === 0) return [];
  // The rows are locked in id order, as a sending statement locks its spaces: an update of them
  // in the order it happens to find them waited in a cycle with two nodes' sends, and PostgreSQL
  // broke it by failing one of the three (a trial saw 136 such deadlocks, and requests answered 500).
  const result = await ex.execute(sql`
    with locked as (
      select id from spaces where id = any(${arrayLiteral(spaceIds)}::uuid[]) order by id for no key update
    )
    update spaces s set streamed_until = greatest(
      s.streamed_until, now() + make_interval(secs => ${STREAM_LEASE_SECONDS})
    )
    from locked l
    where s.id = l.id
    returning s.id, s.event_seq`);
  return rowsOf<{ id: string; event_seq: number | string }>(result).map((row) => ({
    spaceId: row.id,
    eventSeq: Number(row.event_seq),
  }));
}
