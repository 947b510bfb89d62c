import type { TContextBundle } from '@convene/contract';
import { sql } from 'drizzle-orm';
import { checkAccess, departureOf, roleOf, roles, spaceKeyHash } from '../auth/authorize';
import { rowsOf } from '../db/migrate';
import { PreparedStatement } from '../db/prepared';
import type { Deps } from '../deps';
import { NotFoundError } from '../errors';
import { type ChangedContextRow, contextAfterRead, participantsCacheOf } from '../spaces/context-cache';
import { changedSinceFrom, contextJsonColumns } from '../spaces/views';

export interface OpenStreamOptions {
  deps: Deps;
  spaceId: string;
  key: string | undefined;
}

export interface StreamStart {
  /** The participant (or owner) listening: their own departure ends the stream. */
  participantId: string;
  /**
   * The space's last event id in the same snapshot that authorised the caller: every event up to
   * it is in the database for the backlog, every later one arrives live.
   */
  eventSeq: number;
  expiresAt: Date;
  /** The context bundle in that same snapshot, sent once the backlog is out. */
  context: TContextBundle;
}

interface StartRow extends ChangedContextRow {
  state: 'open' | 'closed';
  expires_at: string | Date;
  event_seq: string | number;
  participant_id: string | null;
  status: 'waitingForApproval' | 'active' | 'muted' | 'left' | 'kicked' | null;
  is_owner: boolean | null;
  is_invitation: boolean;
}

/**
 * Authorises a stream (owner or participant key, muted included) and takes the position it
 * starts from and its context, in one statement and so one snapshot: a kick or close committed
 * before it refuses the stream, one committed after it arrives as a live event that ends the
 * stream. The caller must have subscribed to live events before calling this.
 */
export async function openStream({ deps, spaceId, key }: OpenStreamOptions): Promise<StreamStart> {
  const { db, clock, config } = deps;
  const keyHash = spaceKeyHash(spaceId, key);
  // The participants are read since where this process has them (see ParticipantsCache).
  const participants = participantsCacheOf(db);
  const read = await participants.startRead(spaceId);
  let row: StartRow | undefined;
  let context: TContextBundle;
  const now = clock.now();
  try {
    [row] = rowsOf<StartRow>(
      await startStatement.execute(db, { spaceId, keyHash, since: read.base?.snapshot ?? null }),
    );
    if (!row) throw new NotFoundError('space');
    // Whoever asked: the rows read are the space's, and the reads waiting on this one start from them.
    context = contextAfterRead(participants, config, now, spaceId, read.base, row);
  } finally {
    read.finish();
  }
  const expiresAt = new Date(row.expires_at);
  const participant =
    row.participant_id === null ? undefined : { status: row.status!, isOwner: row.is_owner === true };
  checkAccess(
    { state: row.state, expiresAt },
    roleOf(participant, row.is_invitation),
    now,
    { allow: roles.member, whenClosed: 'unauthorized' },
    departureOf(participant),
  );
  return {
    participantId: row.participant_id!,
    eventSeq: Number(row.event_seq),
    expiresAt,
    context,
  };
}

/** The space, the key's participant or invitation, and the context rows; compiled once. */
const startStatement = new PreparedStatement<{ spaceId: string; keyHash: string; since: string | null }>(
  'convene_open_stream',
  sql`
  select s.state, s.expires_at, s.event_seq,
    p.id as participant_id, p.status, p.is_owner,
    exists (
      select 1 from invitations v
      where v.key_hash = ${sql.placeholder('keyHash')} and v.space_id = s.id
    ) as is_invitation,
    ${contextJsonColumns(sql.raw('s.id'), 'since')}
  from spaces s cross join ${changedSinceFrom(sql`${sql.placeholder('since')}::text`, 'since')}
  left join participants p on p.key_hash = ${sql.placeholder('keyHash')} and p.space_id = s.id
  where s.id = ${sql.placeholder('spaceId')}::uuid
`,
);
