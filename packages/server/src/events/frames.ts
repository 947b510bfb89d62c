import type { StreamEvent } from '@convene/core';

/** A stream event serialised once for every subscriber of this process. */
export interface HubEvent extends StreamEvent {
  /** The whole SSE frame: `id:`, `event:`, `data:` and the blank line. */
  frame: string;
}

/** What the fan-out hands each stream of a space. */
export type HubItem =
  | { type: 'event'; event: HubEvent }
  /** A context snapshot taken after the event `afterSeq` (a participant or artifact change). */
  | { type: 'context'; afterSeq: number; frame: string };

export const sseFrame = (event: StreamEvent): string =>
  `id: ${event.seq}\nevent: ${event.kind}\ndata: ${JSON.stringify(event.data)}\n\n`;

export const contextFrame = (context: unknown): string =>
  `event: context\ndata: ${JSON.stringify(context)}\n\n`;
