import type { TSpaceEventKind } from '@convene/contract';

/** The channel every node LISTENs on (the NOTIFY bus: see event-bus.ts). */
export const EVENTS_CHANNEL = 'convene_events';
/** NOTIFY payloads must stay under 8000 bytes; larger events travel as a pointer. */
export const MAX_INLINE_PAYLOAD = 7000;

/** Every stream event a space records, named as on the wire. */
export type SpaceEventKind = TSpaceEventKind;

/** What travels between nodes: the space, its event id, and the event itself when it fits. */
export interface EventNotice {
  spaceId: string;
  seq: number;
  kind: SpaceEventKind;
  data?: unknown;
}
