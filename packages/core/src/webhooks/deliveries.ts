import type { TWebhookDisabledEvent } from '@convene/contract';
import { and, eq, isNull, sql } from 'drizzle-orm';
import { rowsOf } from '../db/migrate';
import { spaces, webhookDeliveries, webhooks } from '../db/schema';
import type { Deps } from '../deps';
import { appendEvent } from '../events/append-event';
import { SECRET_FINGERPRINT_SETTING } from '../infra/sealer';
import { isClosed } from '../spaces/views';
import { refreshHasWebhooks } from './queue';

/** A delivery a node has claimed: everything it needs to sign and send one attempt. */
export interface ClaimedDelivery {
  spaceId: string;
  id: string;
  webhookId: string;
  url: string;
  /** The signing secret (`whsec_…`), decrypted. */
  secret: string;
  /** The exact body to sign and send. */
  payload: string;
  /** This attempt's number: 1 for the first. */
  attempt: number;
  createdAt: Date;
}

export interface ClaimWebhookDeliveriesOptions {
  deps: Deps;
  limit: number;
  /** How long the claim holds: a node that dies mid-attempt leaves it to another after this. */
  leaseMs: number;
}

/**
 * Claims up to `limit` deliveries that are due, for this node alone: rows locked by another
 * node's claim are skipped, and each claimed row is leased, so every attempt is made by one node.
 * A node whose SECRET the deployment has left (Sealer) claims none: it could not sign them.
 */
export async function claimWebhookDeliveries({
  deps,
  limit,
  leaseMs,
}: ClaimWebhookDeliveriesOptions): Promise<ClaimedDelivery[]> {
  const { db, clock, box } = deps;
  const now = clock.now();
  const result = await db.execute(sql`
    with due as (
      select d.space_id, d.id from webhook_deliveries d
      where d.next_attempt_at <= ${now.toISOString()}::timestamptz
        and (d.locked_until is null or d.locked_until <= ${now.toISOString()}::timestamptz)
        and not exists (
          select 1 from settings s
          where s.key = ${SECRET_FINGERPRINT_SETTING} and s.value <> ${box.fingerprint}
        )
      order by d.next_attempt_at
      limit ${limit}
      for update skip locked
    )
    update webhook_deliveries d
    set locked_until = ${new Date(now.getTime() + leaseMs).toISOString()}::timestamptz,
      attempts = d.attempts + 1
    from due, webhooks w
    where d.space_id = due.space_id and d.id = due.id and w.space_id = d.space_id and w.id = d.webhook_id
    returning d.space_id, d.id, d.webhook_id, d.payload, d.attempts, d.created_at, w.url, w.secret_enc
  `);
  const claimed = rowsOf<{
    space_id: string;
    id: string;
    webhook_id: string;
    payload: string;
    attempts: number;
    created_at: string | Date;
    url: string;
    secret_enc: string;
  }>(result);
  // One after another: a secret still sealed under PREVIOUS_SECRET is sealed again in a
  // transaction of its own (on PGlite, one connection).
  const deliveries: ClaimedDelivery[] = [];
  for (const row of claimed)
    deliveries.push({
      spaceId: row.space_id,
      id: row.id,
      webhookId: row.webhook_id,
      url: row.url,
      secret: await box.open(db, row.secret_enc, (ex, fresh) =>
        ex
          .update(webhooks)
          .set({ secretEnc: fresh })
          .where(
            and(
              eq(webhooks.spaceId, row.space_id),
              eq(webhooks.id, row.webhook_id),
              eq(webhooks.secretEnc, row.secret_enc),
            ),
          ),
      ),
      payload: row.payload,
      attempt: Number(row.attempts),
      createdAt: new Date(row.created_at),
    });
  return deliveries;
}

export interface CompleteWebhookDeliveryOptions {
  deps: Deps;
  delivery: Pick<ClaimedDelivery, 'spaceId' | 'id' | 'webhookId'>;
}

/** The receiver took it (2xx): the delivery is done and the webhook's failure count resets. */
export async function completeWebhookDelivery({
  deps,
  delivery,
}: CompleteWebhookDeliveryOptions): Promise<void> {
  const { db, clock } = deps;
  await db.transaction(async (tx) => {
    await tx
      .delete(webhookDeliveries)
      .where(and(eq(webhookDeliveries.spaceId, delivery.spaceId), eq(webhookDeliveries.id, delivery.id)));
    await tx
      .update(webhooks)
      .set({ lastSuccessAt: clock.now(), failures: 0, lastError: null })
      .where(and(eq(webhooks.spaceId, delivery.spaceId), eq(webhooks.id, delivery.webhookId)));
  });
}

export interface FailWebhookDeliveryOptions {
  deps: Deps;
  delivery: Pick<ClaimedDelivery, 'spaceId' | 'id' | 'webhookId' | 'attempt' | 'createdAt'>;
  /** What went wrong, as its owner will read it: `HTTP 500`, `timeout`, `connection refused`. */
  error: string;
  /** The receiver said it is gone for good (410): disable at once. */
  permanent?: boolean;
}

export type FailOutcome =
  | { outcome: 'retry'; at: Date }
  | { outcome: 'given-up' }
  | { outcome: 'disabled'; reason: string };

/**
 * An attempt failed. The delivery is tried again after the next wait of config.webhookRetry-
 * DelaysMs; once they are spent (about 24 h) it is given up. A webhook is disabled when a delivery
 * is given up with nothing delivered to it since that delivery's event, or at once when its
 * receiver answers 410: the space then records a `webhook-disabled` event (streams and the
 * space's other webhooks hear of it) and nothing more is queued for it.
 */
export async function failWebhookDelivery({
  deps,
  delivery,
  error,
  permanent = false,
}: FailWebhookDeliveryOptions): Promise<FailOutcome> {
  const { db, clock, config } = deps;
  const now = clock.now();
  const delay = config.webhookRetryDelaysMs[delivery.attempt - 1];
  return db.transaction(async (tx): Promise<FailOutcome> => {
    const whereWebhook = and(eq(webhooks.spaceId, delivery.spaceId), eq(webhooks.id, delivery.webhookId));
    const whereDelivery = and(
      eq(webhookDeliveries.spaceId, delivery.spaceId),
      eq(webhookDeliveries.id, delivery.id),
    );
    const [webhook] = await tx
      .update(webhooks)
      .set({ failures: sql`${webhooks.failures} + 1`, lastFailureAt: now, lastError: error })
      .where(whereWebhook)
      .returning();
    if (!permanent && delay !== undefined) {
      const at = new Date(now.getTime() + delay);
      await tx.update(webhookDeliveries).set({ nextAttemptAt: at, lockedUntil: null }).where(whereDelivery);
      return { outcome: 'retry', at };
    }
    await tx.delete(webhookDeliveries).where(whereDelivery);
    const silentSince = !webhook?.lastSuccessAt || webhook.lastSuccessAt < delivery.createdAt;
    if (!webhook || webhook.disabledAt || !(permanent || silentSince)) return { outcome: 'given-up' };

    const reason = permanent
      ? `the receiver answered ${error}: it is gone`
      : `every attempt failed for ${duration(now.getTime() - delivery.createdAt.getTime())} (last: ${error})`;
    await tx
      .update(webhooks)
      .set({ disabledAt: now })
      .where(and(whereWebhook, isNull(webhooks.disabledAt)));
    await refreshHasWebhooks(tx, delivery.spaceId);
    await tx
      .delete(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.spaceId, delivery.spaceId),
          eq(webhookDeliveries.webhookId, delivery.webhookId),
        ),
      );
    const [space] = await tx
      .select()
      .from(spaces)
      .where(eq(spaces.id, delivery.spaceId))
      .for('no key update');
    if (space && !isClosed(space, now)) {
      const event: TWebhookDisabledEvent = {
        webhookId: webhook.id,
        participantId: webhook.participantId,
        reason,
      };
      await appendEvent(tx, { clock, events: deps.events }, delivery.spaceId, 'webhook-disabled', event);
    }
    return { outcome: 'disabled', reason };
  });
}

/** 23 h, 12 min, 40 s: how long a delivery kept failing, as its owner reads it. */
function duration(ms: number): string {
  if (ms >= 3_600_000) return `${Math.round(ms / 3_600_000)} h`;
  if (ms >= 60_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.max(0, Math.round(ms / 1000))} s`;
}
