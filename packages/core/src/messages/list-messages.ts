import { limits, type TListMessagesResult } from '@convene/contract';
import { sql } from 'drizzle-orm';
import { authorize, roles } from '../auth/authorize';
import { rowsOf } from '../db/migrate';
import type { Deps } from '../deps';
import { loadContext } from '../spaces/views';
import { formatMicros, type MessageRow, messageRowColumns, toMessageView, truncateToMicros } from './views';

export interface ListMessagesOptions {
  deps: Deps;
  spaceId: string;
  key: string | undefined;
  /** Only messages after this instant (an RFC 3339 date-time, already validated). */
  timestamp?: string | undefined;
}

/**
 * Polling: the messages after `timestamp`, oldest first, at most one page: 500 messages or 4 MiB
 * of content, whichever comes first (the cursor is then the last message returned). Timestamps
 * strictly increase in commit order, so passing back `cursor` yields every message exactly once.
 */
export async function listMessages({
  deps,
  spaceId,
  key,
  timestamp,
}: ListMessagesOptions): Promise<TListMessagesResult> {
  const { db, clock, config } = deps;
  // Muted participants read too; a closed space's keys simply stop working (401).
  const { space } = await authorize(db, clock, {
    spaceId,
    key,
    allow: roles.member,
    whenClosed: 'unauthorized',
  });
  const after = timestamp === undefined ? null : truncateToMicros(timestamp);
  const [result, context] = await Promise.all([
    // At most a page of messages, and no more content than a page's bytes: a message is returned
    // while the content before it stays under the limit, so a page always holds at least one.
    db.execute(sql`
      select ${messageRowColumns} from (
        select m.*, sum(octet_length(m.content)) over (order by m.created_at) as page_bytes
        from messages m
        where m.space_id = ${spaceId}
          ${after === null ? sql`` : sql`and m.created_at > ${after}::timestamptz`}
        order by m.created_at
        limit ${limits.messagesPerPage}
      ) m
      where m.page_bytes - octet_length(m.content) < ${limits.messagesPageBytes}
      order by m.created_at
    `),
    loadContext(db, clock, config, spaceId),
  ]);
  const messages = rowsOf<MessageRow>(result).map(toMessageView);
  const cursor = messages.at(-1)?.timestamp ?? timestamp ?? formatMicros(space.createdAt);
  return { messages, cursor, ...context };
}
