import { type SQL, sql } from 'drizzle-orm';
import { PreparedStatement } from '../db/prepared';
import { EVENTS_CHANNEL, MAX_INLINE_PAYLOAD } from '../events/notice';
import { rateCountSql } from '../infra/rate-limiter';
import { changedSinceFrom, contextJsonColumns } from '../spaces/views';
import { notifyWebhookWorkersSql } from '../webhooks/notify';
import { messageJsonSql } from './views';

export interface AppendValues {
  spaceIds: string[];
  keyHashes: string[];
  messageIds: string[];
  types: string[];
  contents: string[];
  /** The Idempotency-Key records of guarded sends (null for the others): scope and request hash. */
  scopes: (string | null)[];
  requestHashes: (string | null)[];
  /** ISO date-times, as text: drizzle's postgres.js driver passes timestamptz[] values unserialised. */
  recordsExpireAt: (string | null)[];
  /**
   * The snapshot each message's space's participants were last read at (ParticipantsCache), the
   * same for every message of a space; null reads all of them.
   */
  contextSince: (string | null)[];
  now: string;
  /** Whether the statement NOTIFYs itself (the bus is LISTEN/NOTIFY); it returns its notices either way. */
  notify: boolean;
  /**
   * Addressed batches only: replyTos, mentionOrds, mentionIds, nameOrds, names. Counting batches
   * only: rlAddresses, rlBuckets, rlLookups, rlKinds (RateLimitColumns; kind `skip` for a message
   * counted already), rlWindowEnd and rlMax.
   */
  [more: string]: unknown;
}

/**
 * What addressed messages (mentions, `@Name`, replyTo) add to the statement: the checks and
 * resolution before the space lock, the inbox entries after the insert. A batch with no such
 * message runs the statement without them (`plain`), so the everyday send plans and executes
 * no more than it did before messages could be addressed.
 */
const addressing = {
  /** Explicit mentions as (ord, id) pairs and the text after each `@` as (ord, fragment) pairs. */
  checks: sql`
  explicit as (
    select m.ord, m.pid
    from unnest(${sql.placeholder('mentionOrds')}::int[], ${sql.placeholder('mentionIds')}::uuid[]) as m(ord, pid)
  ), bad_mention as (
    -- Only someone in the space (active or muted) can be mentioned. One primary-key probe per
    -- mention: \`offset 0\` keeps PostgreSQL from hashing every participant instead (see
    -- liveCredentialSql).
    select x.ord, min(x.pid::text) as pid
    from explicit x join input i on i.ord = x.ord
    where not exists (select 1 from participants p
      where p.space_id = i.space_id and p.id = x.pid and p.status in ('active', 'muted') offset 0)
    group by x.ord
  ), named_any as (
    -- @Name: a live participant whose name (any case) starts the text after an @ and is followed
    -- by the end or a character that cannot continue a name.
    select f.ord, f.n, p.id as pid, char_length(p.name) as len
    from unnest(${sql.placeholder('nameOrds')}::int[], ${sql.placeholder('names')}::text[])
      with ordinality as f(ord, frag, n)
    join input i on i.ord = f.ord
    join participants p on p.space_id = i.space_id and p.status in ('active', 'muted')
      and lower(left(f.frag, char_length(p.name))) = lower(p.name)
      and (char_length(f.frag) = char_length(p.name)
        or substr(f.frag, char_length(p.name) + 1, 1) !~ '[[:alnum:]_]')
  ), mentioned as (
    -- Of names that both match one @ (Ada, Ada Lovelace), the longest is meant.
    select a.ord, a.pid from named_any a
    where a.len = (select max(b.len) from named_any b where b.ord = a.ord and b.n = a.n)
    union
    select x.ord, x.pid from explicit x
  ), replied as (
    -- The message replied to, probed by (space, id) for each message that names one.
    select i.ord, (select r.sender_id from messages r where r.space_id = i.space_id and r.id = i.reply_to)
      as sender_id
    from input i
    where i.reply_to is not null
  ), valid as (
    select a.* from author a
    where a.ord not in (select ord from bad_mention)
      and a.ord not in (select ord from replied where sender_id is null)
  ),`,
  mentions: sql`(select array_agg(m.pid order by m.pid) from mentioned m where m.ord = c.ord)`,
  inboxed: sql`
  inboxed as (
    -- The inbox entries: who is mentioned, and the author of the message replied to (never the
    -- sender themself).
    insert into inbox_entries (space_id, participant_id, seq, event_seq, mention, reply)
    select r.space_id, r.pid, r.seq, r.event_seq, bool_or(r.mention), bool_or(r.reply)
    from (
      select i.space_id, x.pid, i.seq, i.event_seq, i.sender_id, true as mention, false as reply
      from inserted i cross join unnest(i.mentions) as x(pid)
      union all
      select i.space_id, rp.sender_id, i.seq, i.event_seq, i.sender_id, false, true
      from inserted i join input n on n.message_id = i.id join replied rp on rp.ord = n.ord
    ) r
    where r.pid <> r.sender_id
    group by r.space_id, r.pid, r.seq, r.event_seq
    returning 1
  ),`,
  refusedReason: sql`case when o.ord is not null then 'budget' when bm.ord is not null then 'mention' else 'reply' end`,
  refusedDetail: sql`coalesce(to_char(o.window_ends_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), bm.pid)`,
  refusedMention: sql`left join bad_mention bm on bm.ord = a.ord`,
};

/**
 * Key checks, mention and reply checks, budgets, Idempotency-Key records, sequence bumps, inserts,
 * inbox entries, NOTIFY and the replies' contexts of a batch of messages in one statement,
 * compiled once per variant (see PreparedStatement), in one implicit transaction. It resolves each
 * key to an active sender (locking that participant row, so a concurrent mute or kick is either
 * before it or after it), locks the open spaces written to, counts each sender's budget where the
 * space has one, bumps the space's message and event sequences under the space row lock, stamps
 * each message `greatest(now, previous + 1µs)` so timestamps strictly increase in commit order,
 * inserts it and, when some node listens to the space, NOTIFYs every node. Messages of one space in
 * a batch take consecutive sequence numbers and timestamps 1 µs apart, in arrival order; `ord` is
 * a message's 1-based place in the batch. A guarded send's record is inserted once its space row is
 * locked, so a duplicate in another batch (another node) waits for the space and then meets the
 * committed record: its message is not written (`recorded`), and no batch ever waits on a record.
 * A message refused although its sender may send (a bad mention or reply, the budget spent) writes
 * nothing and records nothing: it comes back with `refused`. Webhooks cost a column of the space
 * row (the workers queue deliveries from the log afterwards).
 */
function appendSql({ full, guarded, counted }: Variant): SQL {
  const a = full ? addressing : undefined;
  const now = sql`${sql.placeholder('now')}::timestamptz`;
  return sql`
  with input as materialized (
    select t.space_id, t.key_hash, t.message_id, t.type, t.content, t.reply_to, t.scope, t.request_hash,
      t.record_expires_at::timestamptz as record_expires_at, t.context_since, t.ord
      ${counted ? sql`, t.rl_address as address, t.rl_bucket as bucket, t.rl_lookup as lookup, t.rl_kind as kind` : sql``}
    from unnest(
      ${sql.placeholder('spaceIds')}::uuid[], ${sql.placeholder('keyHashes')}::text[],
      ${sql.placeholder('messageIds')}::uuid[], ${sql.placeholder('types')}::text[],
      ${sql.placeholder('contents')}::text[],
      ${full ? sql`${sql.placeholder('replyTos')}::uuid[]` : sql`null::uuid[]`},
      ${sql.placeholder('scopes')}::text[], ${sql.placeholder('requestHashes')}::text[],
      ${sql.placeholder('recordsExpireAt')}::text[], ${sql.placeholder('contextSince')}::text[]
      ${
        counted
          ? sql`, ${sql.placeholder('rlAddresses')}::text[], ${sql.placeholder('rlBuckets')}::text[],
      ${sql.placeholder('rlLookups')}::text[], ${sql.placeholder('rlKinds')}::text[]`
          : sql``
      }
    ) with ordinality as t(space_id, key_hash, message_id, type, content, reply_to, scope, request_hash,
      record_expires_at, context_since, ${counted ? sql`rl_address, rl_bucket, rl_lookup, rl_kind, ` : sql``}ord)
  ), ${
    counted
      ? sql`rl_source as (
    -- The requests this statement counts against the rate limit (see PendingCount), first: their
    -- buckets are locked before any participant or space row.
    select * from input where kind <> 'skip'
  ), ${rateCountSql(sql`rl_source`, now, sql`${sql.placeholder('rlWindowEnd')}::timestamptz`)},`
      : sql``
  } author as (
    -- The key's active participant in that space, locked so that a concurrent mute or kick
    -- commits either before the message or after it. A request over the rate limit writes nothing.
    select i.ord, i.space_id, p.id, p.name, p.is_owner
    from input i join participants p on p.key_hash = i.key_hash and p.space_id = i.space_id
    where p.status = 'active'
      ${counted ? sql`and i.ord not in (select ord from rl_position where position > ${sql.placeholder('rlMax')}::int)` : sql``}
    for share of p
  ), ${a ? a.checks : sql`valid as (select * from author),`} locked as (
    -- The open spaces written to, locked in one order so that batches never wait in a cycle.
    -- The plain variant leaves spaces with a budget to the full one (a mute or a budget set
    -- meanwhile is seen here: the row lock re-reads the row it waited for).
    select s.id, s.max_messages_per_minute as budget from spaces s
    where s.id in (select space_id from author) and s.state = 'open' and s.expires_at > ${now}
      ${full ? sql`` : sql`and s.max_messages_per_minute is null`}
    order by s.id
    for no key update
  ), context as (
    -- The context bundle of the replies (and of the recorded answers), once per space: the
    -- participants changed since the snapshot the node has them at (see ParticipantsCache); all
    -- of them where a guarded send records the answer.
    select l.id as space_id, ${contextJsonColumns(sql.raw('l.id'), 'since')}
    from locked l cross join lateral ${changedSinceFrom(
      sql`(select case when bool_or(i.scope is not null) then null else min(i.context_since) end
        from input i where i.space_id = l.id)`,
      'since',
    )}
  ), ${
    full
      ? sql`budget_use as (
    -- Senders in spaces with a budget: their messages of this batch, in order.
    select v.ord, v.space_id, v.id as participant_id, l.budget,
      row_number() over (partition by v.space_id, v.id order by v.ord) as k,
      count(*) over (partition by v.space_id, v.id) as n
    from valid v join locked l on l.id = v.space_id
    where l.budget is not null
  ), budgets as (
    -- Counted under the space row lock, so batches of every node count one after another.
    insert into send_budgets (space_id, participant_id, window_ends_at, used)
    select distinct u.space_id, u.participant_id, ${now} + interval '1 minute', u.n
    from budget_use u
    on conflict (space_id, participant_id) do update set
      window_ends_at = case when send_budgets.window_ends_at <= ${now}
        then excluded.window_ends_at else send_budgets.window_ends_at end,
      used = case when send_budgets.window_ends_at <= ${now}
        then excluded.used else send_budgets.used + excluded.used end
    returning space_id, participant_id, window_ends_at, used
  ), over_budget as (
    select u.ord, u.budget, b.window_ends_at
    from budget_use u join budgets b on b.space_id = u.space_id and b.participant_id = u.participant_id
    where b.used - u.n + u.k > u.budget
  ),`
      : sql``
  } eligible as (
    -- What may be written: valid, in an open space, within the budget.
    select v.* from valid v
    where v.space_id in (select id from locked)
      ${full ? sql`and v.ord not in (select ord from over_budget)` : sql``}
  ), ${
    guarded
      ? sql`claimed as (
    -- Guarded sends record their answer with the message, under the space lock (see above).
    insert into idempotency_records (scope, request_hash, state, status, headers, outcome, created_at, expires_at)
    select i.scope, i.request_hash, 'done', 200, '{}'::jsonb, json_build_object(
        'kind', 'sendMessage', 'messageId', i.message_id::text,
        'mentions', ${a ? sql`coalesce(to_json(${a.mentions}), '[]'::json)` : sql`'[]'::json`},
        'participants', cx.participants, 'artifacts', cx.artifacts)::jsonb,
      ${now}, i.record_expires_at
    from eligible c join input i on i.ord = c.ord join context cx on cx.space_id = c.space_id
    where i.scope is not null
    on conflict (scope) do update set
      request_hash = excluded.request_hash, state = excluded.state, status = excluded.status,
      headers = excluded.headers, body = null, outcome = excluded.outcome,
      created_at = excluded.created_at, expires_at = excluded.expires_at
    -- A record past its 24 h is forgotten; a live one belongs to a duplicate that came first.
    where idempotency_records.expires_at <= ${now}
    returning scope
  ),`
      : sql``
  } caller as (
    select e.*, row_number() over (partition by e.space_id order by e.ord) as k,
      count(*) over (partition by e.space_id) as n
    from eligible e
    ${guarded ? sql`join input i on i.ord = e.ord where i.scope is null or i.scope in (select scope from claimed)` : sql``}
  ), bumped as (
    update spaces s set
      message_seq = s.message_seq + c.n,
      event_seq = s.event_seq + c.n,
      last_message_at = greatest(${now}, coalesce(s.last_message_at, s.created_at) + interval '1 microsecond')
        + (c.n - 1) * interval '1 microsecond'
    from (select distinct space_id, n from caller) c
    where s.id = c.space_id and s.id in (select id from locked)
    -- Only a space some node listens to is notified (see spaces.streamed_until): NOTIFY
    -- serialises every notifying commit of the database and wakes every listening connection.
    returning s.id, s.message_seq, s.event_seq, s.last_message_at, s.streamed_until > now() as streamed,
      s.has_webhooks, c.n
  ), inserted as (
    insert into messages (space_id, id, seq, event_seq, sender_id, sender_name, is_owner, type, content,
      created_at, mentions, reply_to)
    select b.id, i.message_id, b.message_seq - b.n + c.k, b.event_seq - b.n + c.k, c.id, c.name, c.is_owner,
      i.type, i.content, b.last_message_at - (b.n - c.k) * interval '1 microsecond',
      ${a ? a.mentions : sql`null::uuid[]`}, i.reply_to
    from caller c join bumped b on b.id = c.space_id join input i on i.ord = c.ord
    order by b.id, c.k
    returning space_id, id, seq, event_seq, sender_id, sender_name, is_owner, type, content, created_at,
      mentions, reply_to
  ), ${a ? a.inboxed : sql``} notice as (
    select i.space_id, i.id, i.seq, i.event_seq, i.mentions,
      (select b.has_webhooks from bumped b where b.id = i.space_id) as has_webhooks,
      case when (select b.streamed from bumped b where b.id = i.space_id) then json_build_object(
        'spaceId', i.space_id::text, 'seq', i.event_seq, 'kind', 'message',
        'data', ${messageJsonSql(sql.raw('i'))}
      )::text end as payload
    from inserted i
  )${counted ? sql`, outcome as (` : sql``}
  select n.id, n.seq, n.event_seq, n.mentions, false as recorded, null as refused, null as detail,
    null::int as budget,
    -- Heard by this node's streams at once (EventBus.committed), and published by a bus that
    -- does not notify in SQL (EventBus.notifiesInSql).
    n.payload as notice,
    case when ${sql.placeholder('notify')}::boolean and n.payload is not null then pg_notify(${EVENTS_CHANNEL}, case
      when octet_length(n.payload) <= ${MAX_INLINE_PAYLOAD} then n.payload
      -- Too big for NOTIFY: every node fetches the message once by its event id.
      else json_build_object('spaceId', n.space_id::text, 'seq', n.event_seq, 'kind', 'message')::text
    end) end as notified,
    -- Spaces with webhooks wake the workers, which queue the message from the log.
    case when n.has_webhooks then ${notifyWebhookWorkersSql} end as webhooks_notified,
    c.participants, c.artifacts, c.snapshot
  from notice n join context c on c.space_id = n.space_id
  ${
    guarded
      ? sql`union all
  -- Guarded sends whose Idempotency-Key a duplicate recorded first: nothing written.
  select i.message_id, null, null, null, true, null, null, null, null, null, null, null, null, null
  from eligible e join input i on i.ord = e.ord
  where i.scope is not null and i.scope not in (select scope from claimed)`
      : sql``
  }
  union all
  ${
    full
      ? sql`-- Sends refused although their sender may send: nothing written, nothing recorded.
  select i.message_id, null, null, null, false, ${a!.refusedReason}, ${a!.refusedDetail}, o.budget,
    null, null, null, null, null, null
  from author a join input i on i.ord = a.ord
  ${a!.refusedMention}
  left join over_budget o on o.ord = a.ord
  where a.space_id in (select id from locked) and a.ord not in (select ord from eligible)`
      : sql`-- Sends to an open space with a budget: nothing written here, the full variant sends them.
  select i.message_id, null, null, null, false, 'budgeted', null, null, null, null, null, null, null, null
  from author a join input i on i.ord = a.ord join spaces s on s.id = a.space_id
  where a.space_id not in (select id from locked) and s.state = 'open' and s.expires_at > ${now}
    and s.max_messages_per_minute is not null`
  }
  ${
    counted
      ? sql`)
  -- Every message counted, with its place in its rate-limit window, and what became of it.
  select i.message_id as id, o.seq, o.event_seq, o.mentions, coalesce(o.recorded, false) as recorded,
    o.refused, o.detail, o.budget, o.notice, o.participants, o.artifacts, o.snapshot,
    r.key as rate_key, r.position as rate_position, r.expire as rate_expire
  from input i left join outcome o on o.id = i.message_id left join rl_position r on r.ord = i.ord
  where o.id is not null or r.ord is not null`
      : sql``
  }
`;
}

/** The pieces a batch needs (see appendStatement). */
export interface Variant {
  full: boolean;
  guarded: boolean;
  counted: boolean;
}

/**
 * The statement for a batch, compiled once per variant: `full` for addressed messages and spaces
 * with a budget (the plain one, the everyday send, plans and runs none of that), `guarded` when
 * some message carries an Idempotency-Key record (the others neither insert records nor look
 * for a duplicate's), `counted` when some request is left to it to count against the rate limit
 * (PendingCount: the request's own round trip to the counters saved). Every piece a batch does
 * not need is left out of the plan: each costs its set-up on every execution, whether it finds
 * rows or not.
 */
const statements = new Map<string, PreparedStatement<AppendValues>>();
export function appendStatement(variant: Variant): PreparedStatement<AppendValues> {
  const { full, guarded, counted } = variant;
  const name = `convene_send_${full ? 'full' : 'plain'}${guarded ? '_guarded' : ''}${counted ? '_counted' : ''}`;
  let statement = statements.get(name);
  if (!statement) {
    statement = new PreparedStatement<AppendValues>(name, appendSql(variant));
    statements.set(name, statement);
  }
  return statement;
}
