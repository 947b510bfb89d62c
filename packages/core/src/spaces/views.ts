import { limits, type TArtifactSummary, type TContextBundle, type TParticipantView } from '@convene/contract';
import { asc, eq, getTableColumns, type SQL, sql } from 'drizzle-orm';
import type { Clock } from '../clock';
import { artifacts, participants, type spaces } from '../db/schema';
import type { Executor } from '../db/types';
import type { CoreConfig } from '../deps';

type SpaceRow = Omit<typeof spaces.$inferSelect, 'search'>;
type ParticipantRow = typeof participants.$inferSelect;
type ArtifactRow = typeof artifacts.$inferSelect;
type ArtifactSummaryRow = Pick<
  ArtifactRow,
  'id' | 'name' | 'version' | 'updatedAt' | 'lockedBy' | 'lockedAt' | 'lockExpiresAt'
>;

/** The columns a summary needs: never the content. */
export const artifactSummaryColumns = {
  id: artifacts.id,
  name: artifacts.name,
  version: artifacts.version,
  updatedAt: artifacts.updatedAt,
  lockedBy: artifacts.lockedBy,
  lockedAt: artifacts.lockedAt,
  lockExpiresAt: artifacts.lockExpiresAt,
};

export const avatarUrl = (config: CoreConfig, participantId: string): string =>
  `${config.publicUrl}/avatar/${participantId}.svg`;

export function toParticipantView(config: CoreConfig, row: ParticipantRow): TParticipantView {
  return {
    participantId: row.id,
    name: row.name,
    role: row.role,
    avatarUrl: avatarUrl(config, row.id),
    status: row.status,
    isOwner: row.isOwner,
    isHuman: row.isHuman,
    ...(row.lastSeenAt ? { lastSeenAt: row.lastSeenAt.toISOString() } : {}),
    lastReadSeq: Number(row.lastReadSeq),
  };
}

/**
 * An event as this node hands it out. A participant-status event is recorded (and notified to
 * every node) with the avatarUrl of the node that made the change, but every URL a node hands out
 * is built from its own PUBLIC_URL (decisions.md), so the URL is drawn again from the id.
 */
export function servedEvent<T extends { kind: string; data?: unknown }>(config: CoreConfig, event: T): T {
  if (event.kind !== 'participant-status') return event;
  const view = event.data as { participantId?: unknown; avatarUrl?: unknown } | undefined;
  if (typeof view?.participantId !== 'string') return event;
  const url = avatarUrl(config, view.participantId);
  return view.avatarUrl === url ? event : { ...event, data: { ...view, avatarUrl: url } };
}

/** Lock fields appear only while a lock is held and not yet expired. */
export function activeLock(
  row: ArtifactSummaryRow,
  now: Date,
): { lockedBy: string; lockedAt: Date; lockExpiresAt: Date } | null {
  if (!row.lockedBy || !row.lockExpiresAt || row.lockExpiresAt <= now) return null;
  return {
    lockedBy: row.lockedBy,
    lockedAt: row.lockedAt ?? row.updatedAt,
    lockExpiresAt: row.lockExpiresAt,
  };
}

export function toArtifactSummary(row: ArtifactSummaryRow, now: Date): TArtifactSummary {
  const lock = activeLock(row, now);
  return {
    id: row.id,
    name: row.name,
    version: row.version,
    updatedAt: row.updatedAt.toISOString(),
    ...(lock ? { lockedBy: lock.lockedBy, lockExpiresAt: lock.lockExpiresAt.toISOString() } : {}),
  };
}

export const isExpired = (space: Pick<SpaceRow, 'expiresAt'>, now: Date): boolean =>
  space.expiresAt.getTime() <= now.getTime();

/** A space past its TTL behaves as closed. */
export const isClosed = (space: Pick<SpaceRow, 'state' | 'expiresAt'>, now: Date): boolean =>
  space.state === 'closed' || isExpired(space, now);

export const ttlRemaining = (space: SpaceRow, now: Date): number =>
  Math.max(0, Math.ceil((space.expiresAt.getTime() - now.getTime()) / 1000));

export interface ContextOptions {
  /**
   * For invitation-key holders: hide joiners still waiting for approval, and approved ones whose
   * key the join-status poll has not collected yet. Their participantId is what guards that key
   * against anyone else holding the same invitation key.
   */
  hideWaiting?: boolean;
}

/**
 * A participant's role as context bundles carry it (SpaceView's among them: its participants,
 * artifacts and polling interval are one): cut to 200 characters, so that a bundle stays small
 * however long the roles. A participant-status event carries it whole.
 */
const contextRole = sql<string>`left(${participants.role}, ${sql.raw(String(limits.contextRoleMax))})`;

/** A private-space joiner whose key is still to be collected by getJoinStatus. */
const keyUncollected = (p: ParticipantRow): boolean =>
  p.status === 'waitingForApproval' || (p.invitationId !== null && p.keyCollectedAt === null);

/** The context bundle: participants, artifact summaries and the suggested polling interval. */
export async function loadContext(
  ex: Executor,
  clock: Clock,
  config: CoreConfig,
  spaceId: string,
  options: ContextOptions = {},
): Promise<TContextBundle> {
  const [participantRows, artifactRows] = await Promise.all([
    ex
      .select({
        ...getTableColumns(participants),
        role: contextRole,
      })
      .from(participants)
      .where(eq(participants.spaceId, spaceId))
      .orderBy(asc(participants.createdAt), asc(participants.id)),
    ex
      .select(artifactSummaryColumns)
      .from(artifacts)
      .where(eq(artifacts.spaceId, spaceId))
      // Artifacts created at the same instant in a fixed order, as participants are.
      .orderBy(asc(artifacts.createdAt), asc(artifacts.id)),
  ]);
  const now = clock.now();
  return {
    participants: participantRows
      .filter((p) => !(options.hideWaiting && keyUncollected(p)))
      .map((p) => toParticipantView(config, p)),
    artifacts: artifactRows.map((a) => toArtifactSummary(a, now)),
    suggestedPollingIntervalMs: config.suggestedPollingIntervalMs,
  };
}

/**
 * The context bundle's rows as two JSON columns, `participants` and `artifacts`, for a statement
 * that reads them in the same round trip as its own work; `spaceId` is the SQL expression naming
 * the space. Map them with contextFromJson: the same rows, order and mapping as loadContext.
 *
 * With `changedSince` (the alias of a changedSinceFrom in the statement's FROM), the participants
 * are only those changed since that snapshot (all of them when it is null, or when it was taken
 * before the database server last started: a restart or a failover may have handed out its
 * transaction ids again), each with `created` (its place in the order), and a third column,
 * `snapshot`, is the statement's own: see context-cache.ts.
 */
export const contextJsonColumns = (spaceId: SQL, changedSince?: string): SQL => {
  const since = changedSince && sql.raw(`${changedSince}.since`);
  return sql`
    (select coalesce(json_agg(json_build_object(
        'id', p.id, 'name', p.name, 'role', left(p.role, ${sql.raw(String(limits.contextRoleMax))}), 'status', p.status,
        'isOwner', p.is_owner, 'isHuman', p.is_human, 'lastSeenAt', p.last_seen_at,
        'lastReadSeq', p.last_read_seq${since ? sql`, 'created', extract(epoch from p.created_at)` : sql``}
      ) order by p.created_at, p.id), '[]')
      from participants p where p.space_id = ${spaceId}${
        since
          ? sql`
        -- Rows last changed before the snapshot's xmin are visible to it: the index skips them.
        and p.changed_by >= coalesce(pg_snapshot_xmin(${since}), '0'::xid8)
        and (${since} is null or not pg_visible_in_snapshot(p.changed_by, ${since}))`
          : sql``
      }) as participants,
    (select coalesce(json_agg(json_build_object(
        'id', a.id, 'name', a.name, 'version', a.version, 'updatedAt', a.updated_at,
        'lockedBy', a.locked_by, 'lockedAt', a.locked_at, 'lockExpiresAt', a.lock_expires_at
      ) order by a.created_at, a.id), '[]')
      from artifacts a where a.space_id = ${spaceId}) as artifacts${
        changedSince
          ? sql`, pg_current_snapshot()::text || '@' || ${sql.raw(`${changedSince}.start`)} as snapshot`
          : sql``
      }`;
};

/**
 * The snapshot a changed-since read compares with (see contextJsonColumns), as a FROM item named
 * `alias` with two columns: `since`, `text` (a `snapshot` contextJsonColumns gave before, or
 * null) parsed, null when it is null or of an earlier run of the database server; and `start`,
 * when the database server started. `text` and `start` are computed once per row of the FROM it
 * joins (`offset 0` keeps PostgreSQL from pulling them up into each place that uses `since`: the
 * sending statement's correlated read of its batch's snapshot and the start time ran four times
 * per space, a tenth of the statement's instructions on PGlite).
 */
export const changedSinceFrom = (text: SQL, alias: string): SQL => sql`(
    select x.start, case when split_part(x.text, '@', 2) = x.start
      then split_part(x.text, '@', 1)::pg_snapshot end as since
    from (select ${text} as text, extract(epoch from pg_postmaster_start_time())::text as start offset 0) x
    offset 0) as ${sql.raw(alias)}`;

/** A participant as contextJsonColumns has it. */
export type ParticipantJson = Pick<
  ParticipantRow,
  'id' | 'name' | 'role' | 'status' | 'isOwner' | 'isHuman'
> & {
  lastSeenAt: string | null;
  lastReadSeq: number | string;
};
interface ArtifactJson {
  id: string;
  name: string;
  version: number;
  updatedAt: string;
  lockedBy: string | null;
  lockedAt: string | null;
  lockExpiresAt: string | null;
}

/** The context bundle from the columns of contextJsonColumns (json, or its text on some drivers). */
export function contextFromJson(
  config: CoreConfig,
  now: Date,
  row: { participants: unknown; artifacts: unknown },
): TContextBundle {
  return {
    participants: participantsFromJson(config, row.participants),
    artifacts: artifactsFromJson(now, row.artifacts),
    suggestedPollingIntervalMs: config.suggestedPollingIntervalMs,
  };
}

/** contextJsonColumns' participants as ParticipantViews. */
export const participantsFromJson = (config: CoreConfig, value: unknown): TParticipantView[] =>
  jsonArray<ParticipantJson>(value).map((p) => participantFromJson(config, p));

/** One participant of contextJsonColumns as a ParticipantView. */
export const participantFromJson = (config: CoreConfig, p: ParticipantJson): TParticipantView =>
  toParticipantView(config, {
    ...p,
    lastSeenAt: p.lastSeenAt === null ? null : new Date(p.lastSeenAt),
    lastReadSeq: Number(p.lastReadSeq),
  } as ParticipantRow);

/** contextJsonColumns' artifacts as summaries, lock fields as of `now`. */
export const artifactsFromJson = (now: Date, value: unknown): TArtifactSummary[] =>
  jsonArray<ArtifactJson>(value).map((a) =>
    toArtifactSummary(
      {
        ...a,
        updatedAt: new Date(a.updatedAt),
        lockedAt: a.lockedAt === null ? null : new Date(a.lockedAt),
        lockExpiresAt: a.lockExpiresAt === null ? null : new Date(a.lockExpiresAt),
      },
      now,
    ),
  );

/** A json column as postgres.js (parsed) or another driver (text) returns it. */
export const jsonArray = <T>(value: unknown): T[] =>
  (typeof value === 'string' ? JSON.parse(value) : value) as T[];
