import { asc, eq } from 'drizzle-orm';
import type { Clock } from '../clock';
import type { TArtifactSummary, TContextBundle, TParticipantView } from '../contract';
import { artifacts, participants, type spaces } from '../db/schema';
import type { Executor } from '../db/types';
import type { CoreConfig } from '../deps';

type SpaceRow = typeof spaces.$inferSelect;
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
  };
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

export const isExpired = (space: SpaceRow, now: Date): boolean => space.expiresAt.getTime() <= now.getTime();

/** A space past its TTL behaves as closed. */
export const isClosed = (space: SpaceRow, now: Date): boolean =>
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

/** A private-space joiner whose key is still to be collected by getJoinStatus. */
const keyUncollected = (p: ParticipantRow): boolean =>
  p.status === 'waitingForApproval' || p.invitationId !== null;

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
      .select()
      .from(participants)
      .where(eq(participants.spaceId, spaceId))
      .orderBy(asc(participants.createdAt)),
    ex
      .select(artifactSummaryColumns)
      .from(artifacts)
      .where(eq(artifacts.spaceId, spaceId))
      .orderBy(asc(artifacts.createdAt)),
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
