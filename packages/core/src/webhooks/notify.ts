import { type SQL, sql } from 'drizzle-orm';

/** The channel webhook workers LISTEN on: an event was recorded in a space with webhooks. */
export const WEBHOOKS_CHANNEL = 'convene_webhooks';

/** NOTIFYs the webhook workers on commit; several in one transaction are delivered once. */
export const notifyWebhookWorkersSql: SQL = sql`pg_notify(${WEBHOOKS_CHANNEL}, '')`;
