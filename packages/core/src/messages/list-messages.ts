import { limits, type TListMessagesResult } from '@convene/contract';
import { sql } from 'drizzle-orm';
import { authorize, roles } from '../auth/authorize';
import { rowsOf } from '../db/migrate';
import type { Deps } from '../deps';
import { longPoll } from '../events/long-poll';
import { loadContext } from '../spaces/views';
import { formatMicros, type MessageRow, messageRowColumns, toMessageView, truncateToMicros } from './views';

export interface ListMessagesOptions {
  deps: Deps;
  spaceId: string;
  key: string | undefined;
  /** Only messages after this instant (an RFC 3339 date-time, already validated). */
  timestamp?: string | undefined;
  /** Long poll: with no message to answer yet, wait up to this many seconds for one. */
  wait?: number | undefined;
  /** Ends a wait early. */
  signal?: AbortSignal | undefined;
  /** Called every few seconds while waiting. */
  onHeartbeat?: ((elapsedMs: number) => void) | undefined;
}

/**
 * Polling, or long polling with `wait`: answers as soon as a message after `timestamp` is
 * committed on any node, or with none when the time is up; it wakes on the space's events and
 * reads nothing while it waits. A space closed, expired or a key invalidated meanwhile ends it (401).
 */
export function listMessages(options: ListMessagesOptions): Promise<TListMessagesResult> {
  const { deps, spaceId, wait, signal, onHeartbeat } = options;
  let msToExpiry: number | undefined;
  return longPoll({
    watch: deps.watch,
    spaceId,
    waitSeconds: wait,
    signal,
    onHeartbeat,
    read: async () => {
      const { expiresAt, result } = await readMessages(options);
      msToExpiry = expiresAt.getTime() - deps.clock.now().getTime();
      return result;
    },
    msToExpiry: () => msToExpiry,
    hasNews: (result) => result.messages.length > 0,
    wakesOn: (event) => !event.kind.startsWith('artifact-'),
  });
}

/**
 * The messages after `timestamp`, oldest first, at most one page: 500 messages or 4 MiB of
 * content, whichever comes first (the cursor is then the last message returned). Timestamps
 * strictly increase in commit order, so passing back `cursor` yields every message exactly once.
 */
async function readMessages({
  deps,
  spaceId,
  key,
  timestamp,
}: ListMessagesOptions): Promise<{ expiresAt: Date; result: TListMessagesResult }> {
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
  return { expiresAt: space.expiresAt, result: { messages, cursor, ...context } };
}
