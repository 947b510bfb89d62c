import { sql } from 'drizzle-orm';
import { authorize, type ParticipantRow, roles } from '../auth/authorize';
import type { TContextBundle, TSendMessageRequest, TSendMessageResult } from '../contract';
import { rowsOf } from '../db/migrate';
import { PreparedStatement } from '../db/prepared';
import type { Deps } from '../deps';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../errors';
import { EVENTS_CHANNEL, MAX_INLINE_PAYLOAD } from '../events/append-event';
import { isUuid, newId } from '../ids';
import { hashSecret } from '../secrets';
import { toArtifactSummary, toParticipantView } from '../spaces/views';

export interface SendMessageOptions {
  deps: Deps;
  spaceId: string;
  key: string | undefined;
  input: Pick<TSendMessageRequest, 'content' | 'type'>;
}

interface Appended {
  seq: string | number;
  event_seq: string | number;
  /** The context bundle's rows, read by the same statement (json, or its text on some drivers). */
  participants: unknown;
  artifacts: unknown;
}

type ParticipantJson = Pick<ParticipantRow, 'id' | 'name' | 'role' | 'status' | 'isOwner' | 'isHuman'>;
interface ArtifactJson {
  id: string;
  name: string;
  version: number;
  updatedAt: string;
  lockedBy: string | null;
  lockedAt: string | null;
  lockExpiresAt: string | null;
}

/**
 * The owner or an active participant posts a message. The hot path is one statement: it
 * resolves the key to an active sender (locking that participant row, so a concurrent mute or
 * kick is either before it or after it), bumps the space's message and event sequences under the
 * space row lock, stamps the message `greatest(now, previous + 1µs)` so timestamps strictly
 * increase in commit order, inserts it and, when some node listens to the space, NOTIFYs every
 * node, all in one implicit transaction, and reads the reply's context bundle on the way.
 * Only when it writes nothing does the full authorization run, to say why.
 */
export async function sendMessage({
  deps,
  spaceId,
  key,
  input,
}: SendMessageOptions): Promise<TSendMessageResult> {
  const { db, clock } = deps;
  if (!isUuid(spaceId)) throw new NotFoundError('space');
  if (!key) throw new UnauthorizedError('X-Private-Key is required');

  const messageId = newId();
  for (let attempt = 0; ; attempt++) {
    let appended: Appended | undefined;
    try {
      appended = await append(deps, spaceId, hashSecret(key), messageId, input);
    } catch (error) {
      // A moderation transaction locking rows in the other order: PostgreSQL picks a victim.
      if (attempt < 3 && pgCode(error) === '40P01') continue;
      throw error;
    }
    if (appended) return { messageId, ...toContext(deps, appended) };

    // Nothing written: find out why (404, 401, 409), or refuse a muted sender (403).
    const { caller } = await authorize(db, clock, {
      spaceId,
      key,
      allow: roles.member,
      whenClosed: 'conflict',
    });
    if (caller.participant?.status === 'muted')
      throw new ForbiddenError('muted participants cannot send messages');
    // The sender's status changed between the two reads (e.g. unmuted): try again.
    if (attempt >= 3) throw new ForbiddenError('the sender is not an active participant');
  }
}

async function append(
  { db, clock }: Deps,
  spaceId: string,
  keyHash: string,
  messageId: string,
  { content, type }: Pick<TSendMessageRequest, 'content' | 'type'>,
): Promise<Appended | undefined> {
  const now = clock.now().toISOString();
  const result = await appendStatement.execute(db, { keyHash, spaceId, now, messageId, type, content });
  return rowsOf<Appended>(result)[0];
}

/**
 * Key check, sequence bump, insert, NOTIFY and the reply's context in one statement, compiled
 * once (see PreparedStatement).
 */
const appendStatement = new PreparedStatement<{
  keyHash: string;
  spaceId: string;
  now: string;
  messageId: string;
  type: string;
  content: string;
}>(
  'convene_send_message',
  sql`
  with input as materialized (
    -- Every value once, typed here: the statement below reads them from this row.
    select ${sql.placeholder('spaceId')}::uuid as space_id, ${sql.placeholder('keyHash')}::text as key_hash,
      ${sql.placeholder('now')}::timestamptz as now, ${sql.placeholder('messageId')}::uuid as message_id,
      ${sql.placeholder('type')}::text as type, ${sql.placeholder('content')}::text as content
  ), caller as (
    select p.id, p.name, p.is_owner
    from participants p
    where p.key_hash = (select key_hash from input) and p.space_id = (select space_id from input)
      and p.status = 'active'
    for share
  ), bumped as (
    update spaces s set
      message_seq = s.message_seq + 1,
      event_seq = s.event_seq + 1,
      last_message_at = greatest(
        (select now from input),
        coalesce(s.last_message_at, s.created_at) + interval '1 microsecond'
      )
    where s.id = (select space_id from input) and s.state = 'open' and s.expires_at > (select now from input)
      and exists (select 1 from caller)
    returning s.id, s.message_seq, s.event_seq, s.last_message_at, s.streamed_until
  ), inserted as (
    insert into messages (space_id, id, seq, event_seq, sender_id, sender_name, is_owner, type, content, created_at)
    select b.id, i.message_id, b.message_seq, b.event_seq, c.id, c.name, c.is_owner, i.type, i.content, b.last_message_at
    from bumped b cross join caller c cross join input i
    returning space_id, id, seq, event_seq, sender_id, sender_name, is_owner, type, content, created_at
  ), notice as (
    -- Only a space some node listens to is notified (see spaces.streamed_until): NOTIFY
    -- serialises every notifying commit of the database and wakes every listening connection.
    select i.space_id, i.seq, i.event_seq, case when b.streamed_until > now() then json_build_object(
      'spaceId', i.space_id::text, 'seq', i.event_seq, 'kind', 'message',
      'data', json_build_object(
        'id', i.id::text, 'senderId', i.sender_id, 'senderName', i.sender_name,
        'isOwner', i.is_owner, 'content', i.content, 'type', i.type,
        'timestamp', to_char(i.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        'seq', i.seq
      )
    )::text end as payload
    from inserted i cross join bumped b
  )
  select n.seq, n.event_seq,
    case when n.payload is not null then pg_notify(${EVENTS_CHANNEL}, case
      when octet_length(n.payload) <= ${MAX_INLINE_PAYLOAD} then n.payload
      -- Too big for NOTIFY: every node fetches the message once by its event id.
      else json_build_object('spaceId', n.space_id::text, 'seq', n.event_seq, 'kind', 'message')::text
    end) end as notified,
    -- The context bundle of the reply, in the same round trip (the rows loadContext reads).
    (select coalesce(json_agg(json_build_object(
        'id', p.id, 'name', p.name, 'role', p.role, 'status', p.status,
        'isOwner', p.is_owner, 'isHuman', p.is_human) order by p.created_at), '[]')
      from participants p where p.space_id = n.space_id) as participants,
    (select coalesce(json_agg(json_build_object(
        'id', a.id, 'name', a.name, 'version', a.version, 'updatedAt', a.updated_at,
        'lockedBy', a.locked_by, 'lockedAt', a.locked_at, 'lockExpiresAt', a.lock_expires_at
      ) order by a.created_at), '[]')
      from artifacts a where a.space_id = n.space_id) as artifacts
  from notice n
`,
);

/** The reply's context bundle, mapped by the same functions as loadContext's. */
function toContext({ clock, config }: Deps, appended: Appended): TContextBundle {
  const json = <T>(value: unknown): T[] => (typeof value === 'string' ? JSON.parse(value) : value) as T[];
  const date = (value: string | null) => (value === null ? null : new Date(value));
  const now = clock.now();
  return {
    participants: json<ParticipantJson>(appended.participants).map((p) =>
      toParticipantView(config, p as ParticipantRow),
    ),
    artifacts: json<ArtifactJson>(appended.artifacts).map((a) =>
      toArtifactSummary(
        {
          ...a,
          updatedAt: new Date(a.updatedAt),
          lockedAt: date(a.lockedAt),
          lockExpiresAt: date(a.lockExpiresAt),
        },
        now,
      ),
    ),
    suggestedPollingIntervalMs: config.suggestedPollingIntervalMs,
  };
}

function pgCode(error: unknown): string | undefined {
  for (let e: unknown = error; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}
