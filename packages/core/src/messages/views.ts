import type { TMessageView } from '@convene/contract';
import { type SQL, sql } from 'drizzle-orm';

/** A JS Date (millisecond precision) written the same way, with 6 fractional digits. */
export const formatMicros = (date: Date): string => date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/**
 * A client's date-time cut down to microseconds, the precision timestamps are stored with.
 * Truncating (never rounding) is exact: a message lies after the instant iff it lies after the
 * truncated one, since message timestamps are whole microseconds.
 */
export const truncateToMicros = (value: string): string => value.replace(/(\.\d{6})\d+/, '$1');

/** The columns of a message row as read by every query that builds MessageViews. */
export interface MessageRow {
  id: string;
  sender_id: string;
  sender_name: string;
  is_owner: boolean;
  content: string;
  type: TMessageView['type'];
  /** Already formatted by `isoMicros`. */
  timestamp: string;
  seq: number | string;
  event_seq: number | string;
  /** uuid[] as the driver gives it (an array, or its text `{…}`), or null. */
  mentions: string[] | string | null;
  reply_to: string | null;
}

/** The select list matching MessageRow, for raw queries on `messages` (alias `m`). */
export const messageRowColumns = sql.raw(
  `m.id, m.sender_id, m.sender_name, m.is_owner, m.content, m.type, m.seq, m.event_seq, m.mentions, m.reply_to, to_char(m.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as timestamp`,
);

/** A uuid[] column's value: PGlite and postgres.js give arrays, a text cast gives `{a,b}`. */
export function uuidArray(value: string[] | string | null | undefined): string[] {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return value;
  const inner = value.replace(/^\{|\}$/g, '');
  return inner ? inner.split(',') : [];
}

export function toMessageView(row: MessageRow): TMessageView {
  return {
    id: row.id,
    senderId: row.sender_id,
    senderName: row.sender_name,
    isOwner: row.is_owner,
    content: row.content,
    type: row.type,
    timestamp: row.timestamp,
    seq: Number(row.seq),
    mentions: uuidArray(row.mentions),
    ...(row.reply_to ? { replyTo: row.reply_to } : {}),
  };
}

/** A MessageView as JSON from a messages row (alias given); replyTo only when set. */
export const messageJsonSql = (m: SQL): SQL => sql`json_strip_nulls(json_build_object(
  'id', ${m}.id::text, 'senderId', ${m}.sender_id, 'senderName', ${m}.sender_name,
  'isOwner', ${m}.is_owner, 'content', ${m}.content, 'type', ${m}.type,
  'timestamp', to_char(${m}.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
  'seq', ${m}.seq, 'mentions', coalesce(to_json(${m}.mentions), '[]'::json), 'replyTo', ${m}.reply_to
))`;
