import { z } from 'zod';
import { ZUuid } from './common';
import { ZMessageView } from './messages';
import { ZArtifactSummary, ZContextBundle, ZParticipantView } from './views';
import { ZWebhookDisabledEvent } from './webhooks';

/**
 * The events of a space's stream (`GET /hub/space/{spaceId}/messages/stream`): the SSE `event:`
 * name of each and the schema of its `data:`. Every event but `context` carries `id:`, the space's
 * event sequence number, which a client sends back as `Last-Event-ID` to resume.
 */
export const ZSpaceClosedEvent = z
  .object({ spaceId: ZUuid, reason: z.enum(['closed', 'expired']) })
  .meta({ id: 'SpaceClosedEvent' });
export type TSpaceClosedEvent = z.infer<typeof ZSpaceClosedEvent>;

/**
 * `context`: the space's participants and artifacts as they are after the event `lastEventId`
 * (an addition to the bundle). The event itself has no id, but a client that has had no event
 * with an id since resumes after `lastEventId`: so a stream opened with `timestamp`, whose replay
 * holds messages only, does not replay on reconnecting the other events of before it began.
 */
export const ZContextEvent = ZContextBundle.extend({
  lastEventId: z.number().int().nonnegative().meta({
    description:
      'The id of the last event this snapshot follows: resume after it (Last-Event-ID) when no event with an id has come since',
  }),
}).meta({ id: 'ContextEvent' });
export type TContextEvent = z.infer<typeof ZContextEvent>;

export const streamEventSchemas = {
  message: ZMessageView,
  'participant-status': ZParticipantView,
  context: ZContextEvent,
  'artifact-created': ZArtifactSummary,
  'artifact-updated': ZArtifactSummary,
  'artifact-locked': ZArtifactSummary,
  'artifact-unlocked': ZArtifactSummary,
  'space-closed': ZSpaceClosedEvent,
  'webhook-disabled': ZWebhookDisabledEvent,
} as const;

export type TStreamEventName = keyof typeof streamEventSchemas;
export const ZStreamEventName = z.enum(
  Object.keys(streamEventSchemas) as [TStreamEventName, ...TStreamEventName[]],
);

/** The data of each stream event, by name. */
export type TStreamEventData = { [K in TStreamEventName]: z.infer<(typeof streamEventSchemas)[K]> };

/** The events a space records and replays: every stream event but the per-connection `context`. */
export type TSpaceEventKind = Exclude<TStreamEventName, 'context'>;

/**
 * One parsed stream event: its name, its data and, except for `context`, its event id. A
 * discriminated union, so `switch (ev.event)` narrows `ev.data`.
 */
export type TStreamEvent = {
  [K in TStreamEventName]: {
    event: K;
    id: K extends 'context' ? undefined : number;
    data: TStreamEventData[K];
  };
}[TStreamEventName];
