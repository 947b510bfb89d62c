import { limits, type TInboxResult } from '@convene/contract';
import { sql } from 'drizzle-orm';
import { authorize, roles } from '../auth/authorize';
import { rowsOf } from '../db/migrate';
import type { Deps } from '../deps';
import { longPoll } from '../events/long-poll';
import { type MessageRow, messageRowColumns, toMessageView } from '../messages/views';
import { unreadCounts } from './unread';

export interface GetInboxOptions {
  deps: Deps;
  spaceId: string;
  key: string | undefined;
  /** Read past this seq rather than the read position, when it is further on (paging). */
  after?: number | undefined;
  limit?: number | undefined;
  /** Long poll: with nothing in the inbox yet, wait up to this many seconds. */
  wait?: number | undefined;
  signal?: AbortSignal | undefined;
  onHeartbeat?: ((elapsedMs: number) => void) | undefined;
}

/**
 * The caller's inbox: the messages that mention them or reply to one of theirs, after their
 * acknowledged position (ackInbox), oldest first, with what is unread. Reading moves nothing, so
 * an agent that crashes before acknowledging gets the same messages again, and after
 * acknowledging never sees them twice. With `wait`, it answers as soon as such a message is
 * committed on any node.
 */
export function getInbox(options: GetInboxOptions): Promise<TInboxResult> {
  const { deps, spaceId, wait, signal, onHeartbeat } = options;
  let me: string | undefined;
  let msToExpiry: number | undefined;
  return longPoll({
    watch: deps.watch,
    spaceId,
    waitSeconds: wait,
    signal,
    onHeartbeat,
    read: async () => {
      const { participantId, expiresAt, result } = await readInbox(options);
      me = participantId;
      msToExpiry = expiresAt.getTime() - deps.clock.now().getTime();
      return result;
    },
    msToExpiry: () => msToExpiry,
    hasNews: (result) => result.messages.length > 0,
    wakesOn: (event) => {
      if (event.kind === 'message') {
        const message = event.data as { senderId?: string; mentions?: string[]; replyTo?: string };
        if (message.senderId === me) return false;
        return Boolean(message.replyTo) || (me !== undefined && Boolean(message.mentions?.includes(me)));
      }
      // A departure, a kick or a close ends the wait with the answer a read then gives.
      return event.kind === 'participant-status' || event.kind === 'space-closed';
    },
  });
}

async function readInbox({
  deps,
  spaceId,
  key,
  after,
  limit,
}: GetInboxOptions): Promise<{ participantId: string; expiresAt: Date; result: TInboxResult }> {
  const { db, clock } = deps;
  const { caller, space } = await authorize(db, clock, {
    spaceId,
    key,
    allow: roles.member,
    whenClosed: 'unauthorized',
  });
  // Only owners and participants pass roles.member: both have their row.
  const participant = caller.participant!;
  const lastReadSeq = Number(participant.lastReadSeq);
  const from = Math.max(lastReadSeq, after ?? 0);
  const [rows, unread] = await Promise.all([
    db.execute(sql`
      select ${messageRowColumns} from inbox_entries e
      join messages m on m.space_id = e.space_id and m.event_seq = e.event_seq
      where e.space_id = ${spaceId} and e.participant_id = ${participant.id} and e.seq > ${from}
      order by e.seq
      limit ${Math.min(limit ?? limits.messagesPerPage, limits.messagesPerPage)}
    `),
    unreadCounts(db, spaceId, participant.id, lastReadSeq),
  ]);
  return {
    participantId: participant.id,
    expiresAt: space.expiresAt,
    result: { messages: rowsOf<MessageRow>(rows).map(toMessageView), lastReadSeq, unread },
  };
}
