import type { SpaceWatch } from '@convene/core';
import type { EventHub } from './hub';

/**
 * The SpaceWatch port over this process's event hub: a long poll subscribes like a stream (the
 * hub leases the space, so its messages are notified) and hears each event once the hub has it.
 */
export function hubSpaceWatch(hub: EventHub): SpaceWatch {
  return {
    async watch(spaceId, onEvent) {
      const unsubscribe = hub.subscribe(spaceId, {
        deliver: (item) => {
          if (item.type === 'event') onEvent(item.event);
        },
        tick: () => {},
        // Server shutdown: the waiter's own signal ends it.
        shutdown: () => {},
      });
      try {
        await hub.ready(spaceId);
      } catch (error) {
        unsubscribe();
        throw error;
      }
      return unsubscribe;
    },
  };
}
