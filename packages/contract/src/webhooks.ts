import { z } from 'zod';
import { ZDateTime, ZSpaceIdParam, ZUuid } from './common';
import { limits } from './limits';

/**
 * What a webhook can be sent: every event of the space's stream but `context`, and `mention`, a
 * message that mentions the webhook's participant or replies to one of theirs.
 */
export const webhookEventTypes = [
  'message',
  'mention',
  'participant-status',
  'artifact-created',
  'artifact-updated',
  'artifact-locked',
  'artifact-unlocked',
  'space-closed',
  'webhook-disabled',
] as const;
export const ZWebhookEventType = z.enum(webhookEventTypes);
export type TWebhookEventType = z.infer<typeof ZWebhookEventType>;

export const ZCreateWebhookBody = z
  .object({
    url: z.string().max(limits.webhookUrlMax).meta({
      format: 'uri',
      description:
        'An http: or https: URL the service POSTs events to; loopback, private and link-local addresses are refused unless the operator allows them',
    }),
    events: z
      .array(ZWebhookEventType)
      .min(1)
      .max(webhookEventTypes.length)
      .optional()
      .meta({ description: 'The event types to deliver; every type when absent' }),
  })
  .meta({ id: 'CreateWebhookRequest' });
export type TCreateWebhookBody = z.infer<typeof ZCreateWebhookBody>;
export const ZCreateWebhookRequest = ZSpaceIdParam.extend(ZCreateWebhookBody.shape);
export type TCreateWebhookRequest = z.infer<typeof ZCreateWebhookRequest>;

export const ZWebhookView = z
  .object({
    id: ZUuid,
    participantId: ZUuid.meta({ description: 'Who registered it' }),
    url: z.string().meta({ format: 'uri' }),
    events: z.array(ZWebhookEventType).optional().meta({ description: 'Absent: every event type' }),
    createdAt: ZDateTime,
    enabled: z.boolean().meta({ description: 'False once delivery gave up (see disabledAt)' }),
    disabledAt: ZDateTime.optional(),
    lastSuccessAt: ZDateTime.optional(),
    lastFailureAt: ZDateTime.optional(),
    lastError: z
      .string()
      .optional()
      .meta({ description: 'The last failure: an HTTP status or a network error' }),
    failures: z.number().int().nonnegative().meta({ description: 'Failed attempts since the last success' }),
  })
  .meta({ id: 'WebhookView' });
export type TWebhookView = z.infer<typeof ZWebhookView>;

export const ZCreateWebhookResult = ZWebhookView.extend({
  secret: z.string().meta({
    description:
      'The signing secret (`whsec_` + base64), returned once: verify each delivery’s webhook-signature with it (Standard Webhooks)',
  }),
}).meta({ id: 'CreateWebhookResult' });
export type TCreateWebhookResult = z.infer<typeof ZCreateWebhookResult>;

export const ZWebhookList = z.object({ webhooks: z.array(ZWebhookView) }).meta({ id: 'WebhookList' });
export type TWebhookList = z.infer<typeof ZWebhookList>;

export const ZWebhookPathParams = ZSpaceIdParam.extend({
  webhookId: z
    .string()
    .meta({ format: 'uuid', description: 'The webhook’s id (the id createWebhook and listWebhooks answer)' }),
});
export type TWebhookPathParams = z.infer<typeof ZWebhookPathParams>;

/** The data of a `webhook-disabled` event (on the stream and to the space's other webhooks). */
export const ZWebhookDisabledEvent = z
  .object({
    webhookId: ZUuid,
    participantId: ZUuid,
    reason: z.string(),
  })
  .meta({ id: 'WebhookDisabledEvent' });
export type TWebhookDisabledEvent = z.infer<typeof ZWebhookDisabledEvent>;

/**
 * The body of every delivery, signed as is: `webhook-id` (the same on every attempt, to drop
 * duplicates), `webhook-timestamp` and `webhook-signature` (`v1,` + base64 HMAC-SHA256 of
 * `id.timestamp.body` under the secret's bytes) travel as headers.
 */
export const ZWebhookPayload = z
  .object({
    type: ZWebhookEventType,
    timestamp: ZDateTime.meta({ description: 'When the event happened' }),
    spaceId: ZUuid,
    data: z.unknown().meta({
      description:
        'The event’s data, as on the stream: MessageView for message and mention, ParticipantView, ArtifactSummary, {spaceId, reason}, WebhookDisabledEvent',
    }),
  })
  .meta({ id: 'WebhookPayload' });
export type TWebhookPayload = z.infer<typeof ZWebhookPayload>;
