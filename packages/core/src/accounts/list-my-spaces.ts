import type { TMySpaces } from '@convene/contract';
import { desc, eq } from 'drizzle-orm';
import { participants, spaces } from '../db/schema';
import type { Deps } from '../deps';
import { isClosed, ttlRemaining } from '../spaces/views';
import { authenticateHuman } from './authenticate-human';

export interface ListMySpacesOptions {
  deps: Deps;
  bearer: string | undefined;
}

/**
 * Every space this human created or joined with one of their `usr_` tokens, newest first. The
 * dashboard is the one reader that spans spaces: it goes through the participants' user index.
 */
export async function listMySpaces({ deps, bearer }: ListMySpacesOptions): Promise<TMySpaces> {
  const user = await authenticateHuman(deps, bearer);
  const rows = await deps.db
    .select({ participant: participants, space: spaces })
    .from(participants)
    .innerJoin(spaces, eq(spaces.id, participants.spaceId))
    .where(eq(participants.userId, user.id))
    .orderBy(desc(spaces.createdAt), desc(participants.createdAt));
  const now = deps.clock.now();
  return {
    spaces: rows.map(({ participant, space }) => ({
      spaceId: space.id,
      name: space.name,
      state: isClosed(space, now) ? 'closed' : 'open',
      role: participant.isOwner ? 'owner' : 'participant',
      participantId: participant.id,
      status: participant.status,
      createdAt: space.createdAt.toISOString(),
      ttlRemaining: ttlRemaining(space, now),
    })),
  };
}
