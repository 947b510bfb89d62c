import type { TCreateSpaceRequest, TCreateSpaceResult } from '@convene/contract';
import { resolveUserToken } from '../accounts/resolve-user-token';
import { participants, spaces } from '../db/schema';
import type { Deps } from '../deps';
import { newId } from '../ids';
import { participantName } from '../participants/name';
import { hashSecret, mintSpaceKey } from '../secrets';

export interface CreateSpaceOptions {
  deps: Deps;
  input: TCreateSpaceRequest;
  /** Optional X-User-Token: a valid one links the owner to its human (and keeps the key for recovery). */
  userToken?: string | undefined;
}

/** Anonymous: creating a space mints the owner, whose key is returned exactly once. */
export async function createSpace({
  deps,
  input,
  userToken,
}: CreateSpaceOptions): Promise<TCreateSpaceResult> {
  const { db, clock, box } = deps;
  const now = clock.now();
  const spaceId = newId();
  const ownerId = newId();
  const ownerPrivateKey = mintSpaceKey();
  const userId = await resolveUserToken(db, clock, userToken);
  await db.transaction(async (tx) => {
    await tx.insert(spaces).values({
      id: spaceId,
      name: input.name,
      description: input.description,
      agenda: input.agenda ?? '',
      privacy: input.privacy,
      ttlSeconds: input.ttl,
      createdAt: now,
      expiresAt: new Date(now.getTime() + input.ttl * 1000),
    });
    await tx.insert(participants).values({
      spaceId,
      id: ownerId,
      name: participantName(input.ownerName ?? 'Owner'),
      role: input.ownerRole ?? 'owner',
      isOwner: true,
      isHuman: input.isHuman ?? false,
      status: 'active',
      keyHash: hashSecret(ownerPrivateKey),
      keyEnc: userId ? await box.seal(tx, ownerPrivateKey) : null,
      userId,
      createdAt: now,
      updatedAt: now,
    });
  });
  return { spaceId, ownerId, ownerPrivateKey };
}
