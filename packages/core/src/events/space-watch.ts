import type { StreamEvent } from './read-events';

/**
 * Watching a space's events as they commit, on any node: the port long polls and A2A tasks wait
 * on. The server's implementation is its event hub (one LISTEN per process on the notifications
 * every writing transaction sends on commit).
 */
export interface SpaceWatch {
  /**
   * Calls `onEvent` with every event of the space committed from now on, on any node, until the
   * returned function is called. Resolves once those events are certain to arrive (for messages,
   * once the space's stream lease is held: see leaseStreams), so that a read made after it, then
   * the events, miss nothing.
   */
  watch(spaceId: string, onEvent: (event: StreamEvent) => void): Promise<() => void>;
}
