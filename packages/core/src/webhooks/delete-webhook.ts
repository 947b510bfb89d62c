import type { TOk } from '@convene/contract';
import { and, eq } from 'drizzle-orm';
import { authorize, roles, whenClosedOf } from '../auth/authorize';
import { webhookDeliveries, webhooks } from '../db/schema';
import type { Deps } from '../deps';
import { NotFoundError } from '../errors';
import { isUuid } from '../ids';
import { refreshHasWebhooks } from './queue';

export interface DeleteWebhookOptions {
  deps: Deps;
  spaceId: string;
  key: string | undefined;
  webhookId: string;
}

/**
 * Deletes a webhook of the caller's (the owner may delete anyone's) with the deliveries still
 * queued for it. Another participant's webhook is 404, as if it did not exist.
 */
export async function deleteWebhook({ deps, spaceId, key, webhookId }: DeleteWebhookOptions): Promise<TOk> {
  const { db, clock } = deps;
  const { caller } = await authorize(db, clock, {
    spaceId,
    key,
    allow: roles.member,
    whenClosed: whenClosedOf.deleteWebhook,
  });
  if (!isUuid(webhookId)) throw new NotFoundError('webhook');
  await db.transaction(async (tx) => {
    const mine = and(eq(webhooks.spaceId, spaceId), eq(webhooks.id, webhookId));
    const [deleted] = await tx
      .delete(webhooks)
      .where(caller.role === 'owner' ? mine : and(mine, eq(webhooks.participantId, caller.participant!.id)))
      .returning({ id: webhooks.id });
    if (!deleted) throw new NotFoundError('webhook');
    await tx
      .delete(webhookDeliveries)
      .where(and(eq(webhookDeliveries.spaceId, spaceId), eq(webhookDeliveries.webhookId, webhookId)));
    await refreshHasWebhooks(tx, spaceId);
  });
  return { ok: true };
}
