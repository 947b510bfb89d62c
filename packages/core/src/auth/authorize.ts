import { and, eq } from 'drizzle-orm';
import type { Clock } from '../clock';
import { invitations, participants, spaces } from '../db/schema';
import type { Executor } from '../db/types';
import { NotFoundError, SpaceClosedError, UnauthorizedError } from '../errors';
import { isUuid } from '../ids';
import { hashSecret } from '../secrets';
import { isClosed } from '../spaces/views';

export type KeyRole = 'owner' | 'participant' | 'invitation';

export type SpaceRow = typeof spaces.$inferSelect;
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
  if (!isUuid(spaceId)) throw new NotFoundError('space');
  if (!key) throw new UnauthorizedError('X-Private-Key is required');
  const keyHash = hashSecret(key);
  const [space] = await ex.select().from(spaces).where(eq(spaces.id, spaceId));
  if (!space) throw new NotFoundError('space');

  const caller = await findCaller(ex, spaceId, keyHash);
  if (!caller || !allow.includes(caller.role)) {
    throw new UnauthorizedError(
      caller ? `this operation needs ${describe(allow)}` : 'unknown key for this space',
    );
  }
  if (isClosed(space, clock.now())) {
    if (whenClosed === 'conflict') throw new SpaceClosedError();
    throw new UnauthorizedError('space is closed: its keys no longer work');
  }
  return { space, caller };
}

async function findCaller(ex: Executor, spaceId: string, keyHash: string): Promise<Caller | null> {
  const [participant] = await ex
    .select()
    .from(participants)
    .where(and(eq(participants.keyHash, keyHash), eq(participants.spaceId, spaceId)));
  if (participant) {
    // Keys of left and kicked participants answer 401 everywhere; a waiting joiner has no usable key yet.
    if (participant.status !== 'active' && participant.status !== 'muted') return null;
    return { role: participant.isOwner ? 'owner' : 'participant', participant, invitationId: null };
  }
  const [invitation] = await ex
    .select({ id: invitations.id })
    .from(invitations)
    .where(and(eq(invitations.keyHash, keyHash), eq(invitations.spaceId, spaceId)));
  return invitation ? { role: 'invitation', participant: null, invitationId: invitation.id } : null;
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
