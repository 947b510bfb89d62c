import type { TWebhookEventType, TWebhookView } from '@convene/contract';
import type { webhooks } from '../db/schema';

type WebhookRow = typeof webhooks.$inferSelect;

/** A webhook as its participant (or the owner) sees it: never its secret. */
export function toWebhookView(row: WebhookRow): TWebhookView {
  return {
    id: row.id,
    participantId: row.participantId,
    url: row.url,
    ...(row.events ? { events: row.events as TWebhookEventType[] } : {}),
    createdAt: row.createdAt.toISOString(),
    enabled: row.disabledAt === null,
    ...(row.disabledAt ? { disabledAt: row.disabledAt.toISOString() } : {}),
    ...(row.lastSuccessAt ? { lastSuccessAt: row.lastSuccessAt.toISOString() } : {}),
    ...(row.lastFailureAt ? { lastFailureAt: row.lastFailureAt.toISOString() } : {}),
    ...(row.lastError ? { lastError: row.lastError } : {}),
    failures: row.failures,
  };
}
