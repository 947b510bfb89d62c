import type { TInvitationResult } from '@convene/contract';
import { authorize, roles, whenClosedOf } from '../auth/authorize';
import { invitations } from '../db/schema';
import type { Deps } from '../deps';
import { newId } from '../ids';
import { hashSecret, mintInvitationKey } from '../secrets';

export interface CreateInvitationOptions {
  deps: Deps;
  spaceId: string;
  key: string | undefined;
}

/**
 * The owner mints a fresh invitation key (stored only as its hash) and the two links that carry
 * it: the browser join page, where the key travels in the URL fragment so it never reaches a
 * server log, and the markdown agent card.
 */
export async function createInvitation({
  deps,
  spaceId,
  key,
}: CreateInvitationOptions): Promise<TInvitationResult> {
  const { db, clock, config } = deps;
  const publicInvitationKey = mintInvitationKey();
  await db.transaction(async (tx) => {
    await authorize(tx, clock, {
      spaceId,
      key,
      allow: roles.owner,
      whenClosed: whenClosedOf.createInvitation,
    });
    await tx.insert(invitations).values({
      spaceId,
      id: newId(),
      keyHash: hashSecret(publicInvitationKey),
      createdAt: clock.now(),
    });
  });
  const encoded = encodeURIComponent(publicInvitationKey);
  return {
    humanLink: `${config.publicUrl}/join/${spaceId}#key=${encoded}`,
    agentLink: `${config.publicUrl}/hub/space/${spaceId}/agent.md?key=${encoded}`,
    publicInvitationKey,
  };
}
