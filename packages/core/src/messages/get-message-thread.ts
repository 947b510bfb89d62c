import type { TMessageView } from '@convene/contract';
import { sql } from 'drizzle-orm';
import { authorize, roles } from '../auth/authorize';
import { rowsOf } from '../db/migrate';
import type { Deps } from '../deps';
import { NotFoundError } from '../errors';
import { isUuid } from '../ids';
import { type MessageRow, messageRowColumns, toMessageView } from './views';

export interface GetMessageThreadOptions {
  deps: Deps;
  spaceId: string;
  key: string | undefined;
  messageId: string;
}

export interface MessageThread {
  message: TMessageView;
  /** The answer to it, if one came: see getMessageThread. */
  reply: TMessageView | undefined;
  /** Messages of others after it that answer something else (what went on meanwhile). */
  between: TMessageView[];
}

/**
 * A message and its answer: the first later message from someone else that replies to it, or
 * that replies to nothing (an answer in a conversation need not say what it answers); messages
 * that reply to another message are not its answer. What an A2A task over a message reports.
 */
export async function getMessageThread({
  deps,
  spaceId,
  key,
  messageId,
}: GetMessageThreadOptions): Promise<MessageThread> {
  const { db, clock } = deps;
  await authorize(db, clock, { spaceId, key, allow: roles.member, whenClosed: 'unauthorized' });
  if (!isUuid(messageId)) throw new NotFoundError('message');
  const rows = rowsOf<MessageRow & { is_reply: boolean; is_origin: boolean }>(
    await db.execute(sql`
      with origin as (select * from messages m where m.space_id = ${spaceId} and m.id = ${messageId})
      select ${messageRowColumns}, true as is_origin, false as is_reply from origin m
      union all
      select * from (
        select ${messageRowColumns}, false, (m.reply_to is null or m.reply_to = o.id)
        from messages m, origin o
        where m.space_id = o.space_id and m.event_seq > o.event_seq and m.sender_id <> o.sender_id
        order by m.event_seq
        limit 100
      ) later
    `),
  );
  const origin = rows.find((row) => row.is_origin);
  if (!origin) throw new NotFoundError('message');
  const between: TMessageView[] = [];
  for (const row of rows) {
    if (row.is_origin) continue;
    if (row.is_reply) return { message: toMessageView(origin), reply: toMessageView(row), between };
    between.push(toMessageView(row));
  }
  return { message: toMessageView(origin), reply: undefined, between };
}
