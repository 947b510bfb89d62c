import type { TSpaceView } from '@convene/contract';
import { authorize, roles } from '../auth/authorize';
import type { Deps } from '../deps';
import { isClosed, loadContext, ttlRemaining } from './views';

export interface GetSpaceOptions {
  deps: Deps;
  spaceId: string;
  key: string | undefined;
}

/** Any key of the space may read it, an invitation key included (a joiner sees what they join). */
export async function getSpace({ deps, spaceId, key }: GetSpaceOptions): Promise<TSpaceView> {
  const { db, clock, config } = deps;
  const { space, caller } = await authorize(db, clock, {
    spaceId,
    key,
    allow: roles.anyKey,
    whenClosed: 'unauthorized',
  });
  const context = await loadContext(db, clock, config, spaceId, {
    hideWaiting: caller.role === 'invitation',
  });
  const now = clock.now();
  return {
    spaceId: space.id,
    name: space.name,
    description: space.description,
    agenda: space.agenda,
    privacy: space.privacy,
    state: isClosed(space, now) ? 'closed' : 'open',
    ttlRemaining: ttlRemaining(space, now),
    ...(space.maxMessagesPerMinute !== null ? { maxMessagesPerMinute: space.maxMessagesPerMinute } : {}),
    you: caller.participant
      ? { role: caller.role, participantId: caller.participant.id, status: caller.participant.status }
      : { role: 'invitation' },
    ...context,
  };
}
