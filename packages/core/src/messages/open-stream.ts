import { authorize, roles } from '../auth/authorize';
import type { Deps } from '../deps';

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
}

/**
 * Authorises a stream (owner or participant key, muted included) and takes the position it
 * starts from, in one snapshot, so that a kick or close committed before it refuses the stream
 * and one committed after it arrives as a live event that ends the stream. The caller must have
 * subscribed to live events before calling this.
 */
export async function openStream({ deps, spaceId, key }: OpenStreamOptions): Promise<StreamStart> {
  const { db, clock } = deps;
  return db.transaction(
    async (tx) => {
      const { space, caller } = await authorize(tx, clock, {
        spaceId,
        key,
        allow: roles.member,
        whenClosed: 'unauthorized',
      });
      return { participantId: caller.participant!.id, eventSeq: space.eventSeq, expiresAt: space.expiresAt };
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
}
