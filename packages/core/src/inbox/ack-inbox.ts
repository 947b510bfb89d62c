import type { TAckInboxResult } from '@convene/contract';
import { sql } from 'drizzle-orm';
import { authorize, roles, whenClosedOf } from '../auth/authorize';
import { rowsOf } from '../db/migrate';
import type { Deps } from '../deps';
import { ValidationError } from '../errors';
import { unreadCounts } from './unread';

export interface AckInboxOptions {
  deps: Deps;
  spaceId: string;
  key: string | undefined;
  /** Everything up to this message seq has been handled. */
  seq: number;
}

/**
 * Moves the caller's read position to `seq`, never backwards (a lower or equal seq changes
 * nothing, so a repeated or late acknowledgement is harmless), in one conditional UPDATE. A seq
 * past the space's last message is refused: it would hide messages not yet written.
 */
export async function ackInbox({ deps, spaceId, key, seq }: AckInboxOptions): Promise<TAckInboxResult> {
  const { db, clock } = deps;
  const { caller } = await authorize(db, clock, {
    spaceId,
    key,
    allow: roles.member,
    whenClosed: whenClosedOf.ackInbox,
  });
  const participant = caller.participant!;
  const [row] = rowsOf<{ last_read_seq: number | string; last_seq: number | string }>(
    await db.execute(sql`
      with space as (select s.message_seq from spaces s where s.id = ${spaceId}),
      moved as (
        update participants p set last_read_seq = ${seq}
        where p.space_id = ${spaceId} and p.id = ${participant.id} and p.last_read_seq < ${seq}
          and ${seq} <= (select message_seq from space)
        returning p.last_read_seq
      )
      select coalesce((select last_read_seq from moved),
          (select p.last_read_seq from participants p where p.space_id = ${spaceId} and p.id = ${participant.id})
        ) as last_read_seq,
        (select message_seq from space) as last_seq
    `),
  );
  const lastSeq = Number(row?.last_seq ?? 0);
  if (seq > lastSeq)
    throw new ValidationError(`seq ${seq} is after the last message of the space (${lastSeq})`);
  const lastReadSeq = Number(row?.last_read_seq ?? 0);
  return { lastReadSeq, unread: await unreadCounts(db, spaceId, participant.id, lastReadSeq) };
}
