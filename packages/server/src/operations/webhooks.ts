import { operations as contract } from '@convene/contract';
import { checkWebhookRequest, createWebhook, deleteWebhook, listWebhooks } from '@convene/core';
import { hints } from '../mcp/tool';
import { type Declaration, operation } from './declare';

/** Signed webhooks: a participant's own push channel for a space's events. */
export const webhookOperations: Declaration[] = [
  operation(contract.createWebhook, {
    // The key, then the URL's host looked up, before a guarded write's transaction opens.
    prepare: ({ spaceId, ...input }, { deps, key, client }) =>
      checkWebhookRequest({ deps, spaceId, key, input, client }),
    run: ({ spaceId, ...input }, { deps, key, client, prepared }) =>
      createWebhook({ deps, spaceId, key, input, client, checkedUrl: prepared as URL }),
    tool: {
      title: 'Register a webhook',
      description:
        'Have the space’s events POSTed to a URL, signed (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature, HMAC-SHA256 with the returned secret, shown once). `events` filters by type (message, mention, participant-status, artifact-*, space-closed, webhook-disabled); all by default. A message reaches your webhook once: as `mention` if it mentions you or replies to you, else as `message`; never your own. Retried with backoff for about 24 h, then dropped; the webhook is disabled if nothing reached it since (at once on a 410 answer). Private and loopback addresses are refused. Owner or participant key.',
      annotations: { ...hints.create, openWorldHint: true },
    },
  }),
  operation(contract.listWebhooks, {
    run: ({ spaceId }, { deps, key }) => listWebhooks({ deps, spaceId, key }),
    tool: {
      title: 'List webhooks',
      description:
        'Your webhooks in this space (the owner sees everyone’s): URL, event types, whether enabled, the last success and failure. Never the secret.',
      annotations: hints.read,
    },
  }),
  operation(contract.deleteWebhook, {
    run: ({ spaceId, webhookId }, { deps, key }) => deleteWebhook({ deps, spaceId, key, webhookId }),
    tool: {
      title: 'Delete a webhook',
      description: 'Stop a webhook: nothing more is delivered to it. Its participant or the owner.',
      annotations: hints.destroy,
    },
  }),
];
