import type { TWebhookList } from '@convene/contract';
import { and, asc, eq } from 'drizzle-orm';
import { authorize, roles } from '../auth/authorize';
import { webhooks } from '../db/schema';
import type { Deps } from '../deps';
import { toWebhookView } from './views';

export interface ListWebhooksOptions {
  deps: Deps;
  spaceId: string;
  key: string | undefined;
}

/** The caller's webhooks in the space, oldest first; the owner sees every participant's. */
export async function listWebhooks({ deps, spaceId, key }: ListWebhooksOptions): Promise<TWebhookList> {
  const { db, clock } = deps;
  const { caller } = await authorize(db, clock, {
    spaceId,
    key,
    allow: roles.member,
    whenClosed: 'unauthorized',
  });
  const rows = await db
    .select()
    .from(webhooks)
    .where(
      caller.role === 'owner'
        ? eq(webhooks.spaceId, spaceId)
        : and(eq(webhooks.spaceId, spaceId), eq(webhooks.participantId, caller.participant!.id)),
    )
    .orderBy(asc(webhooks.createdAt));
  return { webhooks: rows.map(toWebhookView) };
}
