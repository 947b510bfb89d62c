import type { TContextEvent } from '@convene/contract';
import { jsonPartsWithParticipants, type StreamEvent } from '@convene/core';

/** A stream event serialised once for every subscriber of this process. */
export interface HubEvent extends StreamEvent {
  /**
   * The whole SSE frame (`id:`, `event:`, `data:` and the blank line), encoded once: written to
   * every stream as it is, where a string would be encoded again for each socket.
   */
  frame: Buffer;
}

/** What the fan-out hands each stream of a space. */
export type HubItem =
  | { type: 'event'; event: HubEvent }
  /** A context snapshot taken after the event `afterSeq` (a participant or artifact change). */
  | { type: 'context'; afterSeq: number; frame: Buffer };

export const sseFrame = (event: StreamEvent): Buffer =>
  Buffer.from(`id: ${event.seq}\nevent: ${event.kind}\ndata: ${JSON.stringify(event.data)}\n\n`);

const CONTEXT_HEAD = Buffer.from('event: context\ndata: ');
const FRAME_END = Buffer.from('\n\n');

/**
 * A context event in parts: a stream's first context writes them as they are, so streams that
 * start from the same participants, or nearly, share the pieces of their JSON
 * (jsonPartsWithParticipants).
 */
export const contextFrameParts = (context: TContextEvent): Buffer[] => [
  CONTEXT_HEAD,
  ...jsonPartsWithParticipants(context),
  FRAME_END,
];

export const contextFrame = (context: TContextEvent): Buffer => Buffer.concat(contextFrameParts(context));

const chunks = new WeakMap<Buffer, Buffer>();

/** The head of a chunk of a chunked response body: its size in hex, then CRLF. */
export const chunkHead = (size: number): Buffer => Buffer.from(`${size.toString(16)}\r\n`);

/** What ends a chunk: CRLF. */
export const CHUNK_END = Buffer.from('\r\n');

/**
 * A frame as one chunk of a chunked response body (`<size>\r\n<frame>\r\n`), built once per
 * frame and shared by every stream written to: a stream writes it to its socket as it is, where
 * `res.write` would frame it again for each socket in four writes of its own.
 */
export function chunkOf(frame: Buffer): Buffer {
  let chunk = chunks.get(frame);
  if (!chunk) {
    chunk = Buffer.concat([chunkHead(frame.length), frame, CHUNK_END]);
    chunks.set(frame, chunk);
  }
  return chunk;
}
