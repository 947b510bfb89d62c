import { sql } from 'drizzle-orm';
import { PreparedStatement } from '../db/prepared';
import { EVENTS_CHANNEL, MAX_INLINE_PAYLOAD } from '../events/notice';
import { contextJsonColumns } from '../spaces/views';

/**
 * Key checks, sequence bumps, inserts, NOTIFY and the replies' contexts of a batch of messages
 * in one statement, compiled once (see PreparedStatement), in one implicit transaction. It
 * resolves each key to an active sender (locking that participant row, so a concurrent mute or
 * kick is either before it or after it), bumps the space's message and event sequences under the
 * space row lock, stamps each message `greatest(now, previous + 1µs)` so timestamps strictly
 * increase in commit order, inserts it and, when some node listens to the space, NOTIFYs every
 * node. Messages of one space in a batch take consecutive sequence numbers and timestamps 1 µs
 * apart, in arrival order. It also writes the Idempotency-Key records of guarded sends: a record
 * is inserted once its space row is locked, so a duplicate in another batch (another node) waits
 * for the space and then meets the committed record: its message is not written (`recorded`),
 * and no batch ever waits on a record.
 */
export const appendStatement = new PreparedStatement<{
  spaceIds: string[];
  keyHashes: string[];
  messageIds: string[];
  types: string[];
  contents: string[];
  scopes: (string | null)[];
  requestHashes: (string | null)[];
  /** ISO date-times, as text: drizzle's postgres.js driver passes timestamptz[] values unserialised. */
  recordsExpireAt: (string | null)[];
  now: string;
  /** Whether the statement NOTIFYs itself (the bus is LISTEN/NOTIFY) or returns its notices. */
  notify: boolean;
}>(
  'convene_send_messages',
  sql`
  with input as materialized (
    select t.space_id, t.key_hash, t.message_id, t.type, t.content, t.scope, t.request_hash,
      t.record_expires_at::timestamptz as record_expires_at, t.ord
    from unnest(
      ${sql.placeholder('spaceIds')}::uuid[], ${sql.placeholder('keyHashes')}::text[],
      ${sql.placeholder('messageIds')}::uuid[], ${sql.placeholder('types')}::text[],
      ${sql.placeholder('contents')}::text[], ${sql.placeholder('scopes')}::text[],
      ${sql.placeholder('requestHashes')}::text[], ${sql.placeholder('recordsExpireAt')}::text[]
    ) with ordinality as t(space_id, key_hash, message_id, type, content, scope, request_hash,
      record_expires_at, ord)
  ), author as (
    -- The key's active participant in that space, locked so that a concurrent mute or kick
    -- commits either before the message or after it.
    select i.ord, i.space_id, p.id, p.name, p.is_owner
    from input i join participants p on p.key_hash = i.key_hash and p.space_id = i.space_id
    where p.status = 'active'
    for share of p
  ), locked as (
    -- The open spaces written to, locked in one order so that batches never wait in a cycle.
    select s.id from spaces s
    where s.id in (select space_id from author) and s.state = 'open'
      and s.expires_at > ${sql.placeholder('now')}::timestamptz
    order by s.id
    for no key update
  ), context as (
    -- The context bundle of the replies (and of the recorded answers), once per space.
    select l.id as space_id, ${contextJsonColumns(sql.raw('l.id'))}
    from locked l
  ), claimed as (
    -- Guarded sends record their answer with the message, under the space lock (see above).
    insert into idempotency_records (scope, request_hash, state, status, headers, outcome, created_at, expires_at)
    select i.scope, i.request_hash, 'done', 200, '{}'::jsonb, json_build_object(
        'kind', 'sendMessage', 'messageId', i.message_id::text,
        'participants', c.participants, 'artifacts', c.artifacts)::jsonb,
      ${sql.placeholder('now')}::timestamptz, i.record_expires_at
    from author a join input i on i.ord = a.ord join context c on c.space_id = a.space_id
    where i.scope is not null
    on conflict (scope) do update set
      request_hash = excluded.request_hash, state = excluded.state, status = excluded.status,
      headers = excluded.headers, body = null, outcome = excluded.outcome,
      created_at = excluded.created_at, expires_at = excluded.expires_at
    -- A record past its 24 h is forgotten; a live one belongs to a duplicate that came first.
    where idempotency_records.expires_at <= ${sql.placeholder('now')}::timestamptz
    returning scope
  ), caller as (
    select a.*, row_number() over (partition by a.space_id order by a.ord) as k,
      count(*) over (partition by a.space_id) as n
    from author a join input i on i.ord = a.ord
    where a.space_id in (select id from locked)
      and (i.scope is null or i.scope in (select scope from claimed))
  ), bumped as (
    update spaces s set
      message_seq = s.message_seq + c.n,
      event_seq = s.event_seq + c.n,
      last_message_at = greatest(
        ${sql.placeholder('now')}::timestamptz,
        coalesce(s.last_message_at, s.created_at) + interval '1 microsecond'
      ) + (c.n - 1) * interval '1 microsecond'
    from (select distinct space_id, n from caller) c
    where s.id = c.space_id and s.id in (select id from locked)
    -- Only a space some node listens to is notified (see spaces.streamed_until): NOTIFY
    -- serialises every notifying commit of the database and wakes every listening connection.
    returning s.id, s.message_seq, s.event_seq, s.last_message_at, s.streamed_until > now() as streamed, c.n
  ), inserted as (
    insert into messages (space_id, id, seq, event_seq, sender_id, sender_name, is_owner, type, content, created_at)
    select b.id, i.message_id, b.message_seq - b.n + c.k, b.event_seq - b.n + c.k, c.id, c.name, c.is_owner,
      i.type, i.content, b.last_message_at - (b.n - c.k) * interval '1 microsecond'
    from caller c join bumped b on b.id = c.space_id join input i on i.ord = c.ord
    order by b.id, c.k
    returning space_id, id, seq, event_seq, sender_id, sender_name, is_owner, type, content, created_at
  ), notice as (
    select i.space_id, i.id, i.seq, i.event_seq,
      case when (select b.streamed from bumped b where b.id = i.space_id) then json_build_object(
        'spaceId', i.space_id::text, 'seq', i.event_seq, 'kind', 'message',
        'data', json_build_object(
          'id', i.id::text, 'senderId', i.sender_id, 'senderName', i.sender_name,
          'isOwner', i.is_owner, 'content', i.content, 'type', i.type,
          'timestamp', to_char(i.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
          'seq', i.seq
        )
      )::text end as payload
    from inserted i
  )
  select n.id, n.seq, n.event_seq, false as recorded,
    -- A bus that does not notify in SQL (EventBus.notifiesInSql) publishes these itself.
    case when not ${sql.placeholder('notify')}::boolean then n.payload end as notice,
    case when ${sql.placeholder('notify')}::boolean and n.payload is not null then pg_notify(${EVENTS_CHANNEL}, case
      when octet_length(n.payload) <= ${MAX_INLINE_PAYLOAD} then n.payload
      -- Too big for NOTIFY: every node fetches the message once by its event id.
      else json_build_object('spaceId', n.space_id::text, 'seq', n.event_seq, 'kind', 'message')::text
    end) end as notified,
    c.participants, c.artifacts
  from notice n join context c on c.space_id = n.space_id
  union all
  -- Guarded sends whose Idempotency-Key a duplicate recorded first: nothing written.
  select i.message_id, null, null, true, null, null, null, null
  from author a join input i on i.ord = a.ord
  where i.scope is not null and a.space_id in (select id from locked)
    and i.scope not in (select scope from claimed)
`,
);
