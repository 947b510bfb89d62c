import { and, eq } from 'drizzle-orm';
import type { Clock } from '../clock';
import { invitations, participants, spaceColumns, spaces } from '../db/schema';
import type { Executor } from '../db/types';
import {
  KeyRequiredError,
  NotFoundError,
  SpaceClosedError,
  type SpecificCode,
  UnauthorizedError,
} from '../errors';
import { isUuid } from '../ids';
import { hashSecret } from '../secrets';
import { isClosed, isExpired } from '../spaces/views';

export type KeyRole = 'owner' | 'participant' | 'invitation';

export type SpaceRow = Omit<typeof spaces.$inferSelect, 'search'>;
export type ParticipantRow = typeof participants.$inferSelect;

export type Caller =
  | { role: 'owner' | 'participant'; participant: ParticipantRow; invitationId: null }
  | { role: 'invitation'; participant: null; invitationId: string };

export interface AuthorizeOptions {
  spaceId: string;
  /** The X-Private-Key (or `?key=`) presented, if any. */
  key: string | undefined;
  /** Key types that may perform the operation. */
  allow: readonly KeyRole[];
  /**
   * What a closed or expired space answers: `conflict` (409) for operations whose table lists
   * 409, `unauthorized` (401) for the others, whose keys simply stopped working.
   */
  whenClosed: 'conflict' | 'unauthorized';
}

/**
 * Resolves the key presented for a space to a caller, enforcing the rules of Authentication:
 * a key works only on its own space, only for what its type allows, and only while the space is
 * open and its participant is live.
 */
export async function authorize(
  ex: Executor,
  clock: Clock,
  { spaceId, key, allow, whenClosed }: AuthorizeOptions,
): Promise<{ space: SpaceRow; caller: Caller }> {
  const keyHash = spaceKeyHash(spaceId, key);
  const [space] = await ex.select(spaceColumns).from(spaces).where(eq(spaces.id, spaceId));
  if (!space) throw new NotFoundError('space');

  const { caller, departed } = await findCaller(ex, spaceId, keyHash);
  checkAccess(space, caller?.role ?? null, clock.now(), { allow, whenClosed }, departed);
  return { space, caller: caller! };
}

/** How a participant's key ended: they left, or the owner removed them (or refused their join). */
export type Departure = Extract<ParticipantRow['status'], 'left' | 'kicked'>;

/**
 * What a key of a departed participant answers (401): that it no longer works, and why, where a
 * key that names nobody is 'unknown': an agent can tell being removed from a bad key.
 */
export const departedKeyError = (departure: Departure): UnauthorizedError =>
  departure === 'left'
    ? new UnauthorizedError('this key no longer works: its participant left this space', 'participant_left')
    : new UnauthorizedError(
        'this key no longer works: its participant was removed from this space',
        'participant_removed',
      );

/**
 * The lookup hash of the key presented for a space, once the path names a space at all (404 for
 * anything but a UUID) and a key is there (401): the checks every keyed operation makes first.
 */
export function spaceKeyHash(spaceId: string, key: string | undefined): string {
  if (!isUuid(spaceId)) throw new NotFoundError('space');
  if (!key) throw new KeyRequiredError();
  return hashSecret(key);
}

/**
 * The rules of Authentication applied to what a key resolved to in an existing space: its role
 * (null for a key that names nobody live there) must be allowed, and the space open.
 */
export function checkAccess(
  space: Pick<SpaceRow, 'state' | 'expiresAt'>,
  role: KeyRole | null,
  now: Date,
  { allow, whenClosed }: Pick<AuthorizeOptions, 'allow' | 'whenClosed'>,
  /** The key is a participant's who left or was removed (role null). */
  departed?: Departure,
): void {
  if (!role || !allow.includes(role)) {
    if (departed) throw departedKeyError(departed);
    if (!role) throw new UnauthorizedError('unknown key for this space', 'key_unknown');
    const code: SpecificCode =
      allow.length === 1 && allow[0] === 'owner' ? 'owner_key_required' : 'wrong_key_type';
    throw new UnauthorizedError(`this operation needs ${describe(allow)}`, code);
  }
  if (isClosed(space, now)) {
    // A closed space says closed, even once its TTL has passed too.
    const expired = space.state !== 'closed' && isExpired(space, now);
    if (whenClosed === 'conflict') throw new SpaceClosedError(expired);
    throw expired
      ? new UnauthorizedError('space has expired: its keys no longer work', 'space_expired')
      : new UnauthorizedError('space is closed: its keys no longer work', 'space_closed');
  }
}

/**
 * The role of a key: that of the participant it belongs to while they are live (keys of left
 * and kicked participants answer 401 everywhere; a waiting joiner has no usable key yet), else
 * an invitation's, else none.
 */
export function roleOf(
  participant: Pick<ParticipantRow, 'status' | 'isOwner'> | undefined,
  isInvitation: boolean,
): KeyRole | null {
  if (participant) {
    if (participant.status !== 'active' && participant.status !== 'muted') return null;
    return participant.isOwner ? 'owner' : 'participant';
  }
  return isInvitation ? 'invitation' : null;
}

/** The participant's departure, if the key is theirs and they left or were removed. */
export const departureOf = (
  participant: Pick<ParticipantRow, 'status'> | undefined,
): Departure | undefined =>
  participant?.status === 'left' || participant?.status === 'kicked' ? participant.status : undefined;

/** The live caller a key is, if any; else, for a participant's key, how it ended (if it did). */
async function findCaller(
  ex: Executor,
  spaceId: string,
  keyHash: string,
): Promise<{ caller: Caller | null; departed?: Departure | undefined }> {
  const [participant] = await ex
    .select()
    .from(participants)
    .where(and(eq(participants.keyHash, keyHash), eq(participants.spaceId, spaceId)));
  if (participant) {
    const role = roleOf(participant, false);
    return role === 'owner' || role === 'participant'
      ? { caller: { role, participant, invitationId: null } }
      : { caller: null, departed: departureOf(participant) };
  }
  const [invitation] = await ex
    .select({ id: invitations.id })
    .from(invitations)
    .where(and(eq(invitations.keyHash, keyHash), eq(invitations.spaceId, spaceId)));
  return {
    caller: invitation ? { role: 'invitation', participant: null, invitationId: invitation.id } : null,
  };
}

function describe(allow: readonly KeyRole[]): string {
  const names = { owner: 'the owner key', participant: 'a participant key', invitation: 'an invitation key' };
  return allow.map((r) => names[r]).join(' or ');
}

/** Roles shorthand for the operation tables of the specification. */
export const roles = {
  owner: ['owner'],
  member: ['owner', 'participant'],
  anyKey: ['owner', 'participant', 'invitation'],
  invitation: ['invitation'],
} as const satisfies Record<string, readonly KeyRole[]>;

/**
 * What each write made with a space key answers once its space is closed or expired
 * (decisions.md): 409 `space is closed` where the specification's table lists 409, else 401, its
 * key having stopped working. An additive 409 does not count (writeArtifact's `baseVersion`).
 */
export const whenClosedOf = {
  updateSpace: 'conflict',
  closeSpace: 'conflict',
  createInvitation: 'conflict',
  joinSpace: 'conflict',
  approveParticipant: 'conflict',
  kickParticipant: 'conflict',
  muteParticipant: 'conflict',
  unmuteParticipant: 'conflict',
  leaveSpace: 'conflict',
  sendMessage: 'conflict',
  ackInbox: 'conflict',
  createWebhook: 'conflict',
  deleteWebhook: 'conflict',
  createArtifact: 'conflict',
  writeArtifact: 'unauthorized',
  lockArtifact: 'unauthorized',
  heartbeatArtifactLock: 'unauthorized',
  unlockArtifact: 'unauthorized',
  restoreArtifactVersion: 'unauthorized',
} as const satisfies Record<string, AuthorizeOptions['whenClosed']>;

/** Writes whose success is what ends the key that made them: their replay needs no working key. */
const ENDS_ITS_KEY: ReadonlySet<string> = new Set(['closeSpace', 'leaveSpace']);

/**
 * Before an idempotent replay of a write made with a space key: the key must still work, as
 * the write itself would check it now (401 for a participant who left or was removed, 409 or
 * 401 once the space is closed or expired), for a key that stopped working stops on every
 * route, its recorded answers included. The writes that end their own key (close, leave) are
 * still replayed to it: that answer is the one their retry is owed. Other operations pass.
 */
export async function authorizeReplay(
  ex: Executor,
  clock: Clock,
  operationId: string,
  { spaceId, key }: { spaceId: string | undefined; key: string | undefined },
): Promise<void> {
  if (!Object.hasOwn(whenClosedOf, operationId) || ENDS_ITS_KEY.has(operationId)) return;
  if (spaceId === undefined) return;
  const whenClosed = whenClosedOf[operationId as keyof typeof whenClosedOf];
  await authorize(ex, clock, { spaceId, key, allow: roles.anyKey, whenClosed });
}
