import type { TUnreadCounts } from '@convene/contract';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../db/migrate';
import type { Executor } from '../db/types';

/**
 * What waits for a participant after `lastReadSeq`: their inbox entries by kind, and every message
 * of the space (message seqs are consecutive, so that is the space's last seq minus the position).
 */
export async function unreadCounts(
  ex: Executor,
  spaceId: string,
  participantId: string,
  lastReadSeq: number,
): Promise<TUnreadCounts> {
  const [row] = rowsOf<{
    inbox: number | string;
    mentions: number | string;
    replies: number | string;
    last_seq: number | string | null;
  }>(
    await ex.execute(sql`
      select count(*) as inbox, count(*) filter (where e.mention) as mentions,
        count(*) filter (where e.reply) as replies,
        (select s.message_seq from spaces s where s.id = ${spaceId}) as last_seq
      from inbox_entries e
      where e.space_id = ${spaceId} and e.participant_id = ${participantId} and e.seq > ${lastReadSeq}
    `),
  );
  return {
    inbox: Number(row?.inbox ?? 0),
    mentions: Number(row?.mentions ?? 0),
    replies: Number(row?.replies ?? 0),
    messages: Math.max(0, Number(row?.last_seq ?? 0) - lastReadSeq),
  };
}
