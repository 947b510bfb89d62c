import { limits, type TArtifactView, type TLockResult } from '@convene/contract';
import { and, eq } from 'drizzle-orm';
import { type AuthorizeOptions, authorize, type Caller, type SpaceRow } from '../auth/authorize';
import type { Clock } from '../clock';
import { artifacts, participants, spaces } from '../db/schema';
import type { Executor } from '../db/types';
import { ArtifactLockedError, ForbiddenError, NotFoundError } from '../errors';
import { isUuid } from '../ids';
import { activeLock } from '../spaces/views';

export type ArtifactRow = typeof artifacts.$inferSelect;

/**
 * Authorizes inside a writing transaction, after taking the space row's lock.
 *
 * Every transaction that changes artifacts locks the space row first (appendEvent, closeSpace
 * and releaseLocks take the same row), so they all acquire rows in one order — space, then
 * artifacts — and cannot deadlock. Authorizing after that lock also sees a close, kick or leave
 * that committed just before: a participant kicked a moment ago cannot take a lock that their
 * kick already released.
 */
export async function authorizeForUpdate(
  tx: Executor,
  clock: Clock,
  options: AuthorizeOptions,
): Promise<{ space: SpaceRow; caller: Caller & { role: 'owner' | 'participant' } }> {
  if (isUuid(options.spaceId)) {
    await tx
      .select({ id: spaces.id })
      .from(spaces)
      .where(eq(spaces.id, options.spaceId))
      .for('no key update');
  }
  return asMember(await authorize(tx, clock, options));
}

/** Artifact operations are for owner and participant keys only; authorize has refused the rest. */
export function asMember(result: { space: SpaceRow; caller: Caller }): {
  space: SpaceRow;
  caller: Caller & { role: 'owner' | 'participant' };
} {
  if (result.caller.role === 'invitation') throw new Error('authorize let an invitation key through');
  return result as { space: SpaceRow; caller: Caller & { role: 'owner' | 'participant' } };
}

/** Muted participants read, write and release what they hold, but cannot create or lock. */
export function refuseMuted(caller: Caller & { role: 'owner' | 'participant' }, action: string): void {
  if (caller.participant.status === 'muted')
    throw new ForbiddenError(`a muted participant cannot ${action}`, 'participant_muted');
}

/** The artifact row, or 404 (a non-UUID id names nothing). */
export async function findArtifact(ex: Executor, spaceId: string, artifactId: string): Promise<ArtifactRow> {
  const row = isUuid(artifactId)
    ? (await ex.select().from(artifacts).where(artifactWhere(spaceId, artifactId)))[0]
    : undefined;
  if (!row) throw new NotFoundError('artifact');
  return row;
}

/** Guards statements that would choke on a malformed uuid: such an id names nothing (404). */
export function requireArtifactId(artifactId: string): void {
  if (!isUuid(artifactId)) throw new NotFoundError('artifact');
}

export const artifactWhere = (spaceId: string, artifactId: string) =>
  and(eq(artifacts.spaceId, spaceId), eq(artifacts.id, artifactId));

/** The ArtifactView of a row; lock fields only while a lock is live. */
export function toArtifactView(row: ArtifactRow, now: Date): TArtifactView {
  const lock = activeLock(row, now);
  return {
    id: row.id,
    spaceId: row.spaceId,
    name: row.name,
    type: row.type,
    content: row.content,
    version: row.version,
    createdBy: row.createdBy,
    updatedBy: row.updatedBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    ...(lock
      ? {
          lockedBy: lock.lockedBy,
          lockedAt: lock.lockedAt.toISOString(),
          lockExpiresAt: lock.lockExpiresAt.toISOString(),
        }
      : {}),
  };
}

export function toLockResult(row: ArtifactRow): TLockResult {
  if (!row.lockedBy || !row.lockExpiresAt) throw new Error('artifact row carries no lock');
  return { lockedBy: row.lockedBy, lockExpiresAt: row.lockExpiresAt.toISOString() };
}

/**
 * The 423 for a caller who needed the lock: naming the holder (their id, as the specification
 * has it, and their name) when someone else holds it, and nobody when it is free (never held,
 * released, or lapsed).
 */
export async function lockedError(ex: Executor, row: ArtifactRow, now: Date): Promise<ArtifactLockedError> {
  const lock = activeLock(row, now);
  if (!lock)
    return new ArtifactLockedError(null, null, 'you do not hold the lock on this artifact; lock it first');
  const [holder] = await ex
    .select({ name: participants.name })
    .from(participants)
    .where(and(eq(participants.spaceId, row.spaceId), eq(participants.id, lock.lockedBy)));
  const until = lock.lockExpiresAt.toISOString();
  // Who holds it, in the words too: the message is what a log line or a model shows. Quoted as
  // JSON: a name is anyone's text, and may hold a line break.
  const message = holder
    ? `artifact is locked by another participant (${JSON.stringify(holder.name)}) until ${until}`
    : undefined;
  return new ArtifactLockedError(lock.lockedBy, until, message, holder?.name);
}

export const lockExpiry = (now: Date, ttlSeconds: number): Date =>
  new Date(now.getTime() + ttlSeconds * 1000);

/** A version path segment names a version only if it is a positive integer PostgreSQL can hold. */
export function parseVersion(value: string): number | null {
  if (!/^[1-9]\d{0,9}$/.test(value)) return null;
  const version = Number(value);
  return version <= limits.versionMax ? version : null;
}
