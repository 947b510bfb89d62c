import { sql } from 'drizzle-orm';
import { rowsOf } from '../db/migrate';
import type { Executor } from '../db/types';
import { type MessageRow, messageRowColumns, toMessageView, truncateToMicros } from '../messages/views';
import type { SpaceEventKind } from './append-event';

/** One event of a space's stream, as replayed from the database or delivered live. */
export interface StreamEvent {
  /** The space's event sequence number: the SSE `id:`. */
  seq: number;
  kind: SpaceEventKind;
  data: unknown;
}

export interface ReadEventsOptions {
  spaceId: string;
  /** Events with a sequence number above this one… */
  afterSeq: number;
  /** …up to and including this one. */
  untilSeq: number;
  /** Only messages (a backlog by timestamp), optionally only those after this date-time. */
  messagesOnly?: { after?: string | undefined };
  limit: number;
}

/**
 * Reads a range of a space's stream events in sequence order: messages from their table merged
 * with every other event kind from space_events (they share one sequence). Used for the backlog,
 * Last-Event-ID replay, gap filling and notices too big to carry their data.
 */
export async function readEvents(
  ex: Executor,
  { spaceId, afterSeq, untilSeq, messagesOnly, limit }: ReadEventsOptions,
): Promise<StreamEvent[]> {
  if (untilSeq <= afterSeq) return [];
  const messageRows = ex.execute(sql`
    select ${messageRowColumns} from messages m
    where m.space_id = ${spaceId} and m.event_seq > ${afterSeq} and m.event_seq <= ${untilSeq}
      ${messagesOnly?.after ? sql`and m.created_at > ${truncateToMicros(messagesOnly.after)}::timestamptz` : sql``}
    order by m.event_seq
    limit ${limit}
  `);
  const otherRows = messagesOnly
    ? Promise.resolve([])
    : ex.execute(sql`
        select e.seq, e.kind, e.data from space_events e
        where e.space_id = ${spaceId} and e.seq > ${afterSeq} and e.seq <= ${untilSeq}
        order by e.seq
        limit ${limit}
      `);
  const messages: StreamEvent[] = rowsOf<MessageRow>(await messageRows).map((row) => ({
    seq: Number(row.event_seq),
    kind: 'message',
    data: toMessageView(row),
  }));
  const others: StreamEvent[] = rowsOf<{ seq: string | number; kind: SpaceEventKind; data: unknown }>(
    await otherRows,
  ).map((row) => ({
    seq: Number(row.seq),
    kind: row.kind,
    data: typeof row.data === 'string' ? JSON.parse(row.data) : row.data,
  }));
  return mergeBySeq(messages, others).slice(0, limit);
}

function mergeBySeq(a: StreamEvent[], b: StreamEvent[]): StreamEvent[] {
  if (b.length === 0) return a;
  if (a.length === 0) return b;
  const out: StreamEvent[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i]!.seq < b[j]!.seq)) out.push(a[i++]!);
    else out.push(b[j++]!);
  }
  return out;
}
