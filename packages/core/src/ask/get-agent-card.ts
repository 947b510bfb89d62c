import { authorize, type KeyRole, roles } from '../auth/authorize';
import type { Deps } from '../deps';
import { ttlRemaining } from '../spaces/views';

export interface GetAgentCardOptions {
  deps: Pick<Deps, 'db' | 'clock'>;
  spaceId: string;
  /** The key presented (`?key=` or X-Private-Key): the invitation key, or any other key of the space. */
  key: string | undefined;
}

/** What an agent card tells about a space, and which kind of key asked for it. */
export interface AgentCard {
  spaceId: string;
  name: string;
  description: string;
  agenda: string;
  privacy: 'public' | 'private';
  ttlRemaining: number;
  /** The card's join steps apply to an invitation key; other keys are already in. */
  keyRole: KeyRole;
}

/**
 * The facts of an agent card (agentLink). Readable with any key of an open space, the invitation
 * key included, exactly like getSpace; nothing about participants or messages is exposed.
 */
export async function getAgentCard({ deps, spaceId, key }: GetAgentCardOptions): Promise<AgentCard> {
  const { space, caller } = await authorize(deps.db, deps.clock, {
    spaceId,
    key,
    allow: roles.anyKey,
    whenClosed: 'unauthorized',
  });
  return {
    spaceId: space.id,
    name: space.name,
    description: space.description,
    agenda: space.agenda,
    privacy: space.privacy,
    ttlRemaining: ttlRemaining(space, deps.clock.now()),
    keyRole: caller.role,
  };
}
