import type { SpaceWatch } from '@convene/core';
import type { TestServer } from './harness';

/**
 * Counts the waits (long polls, A2A tasks) a server holds per space, by wrapping its SpaceWatch
 * port: a test then sends once a wait is certainly waiting, instead of sleeping and hoping.
 */
export class WaitWatcher {
  private readonly counts = new Map<string, number>();
  private wakers: (() => void)[] = [];

  constructor(srv: TestServer) {
    const inner = srv.server.deps.watch;
    if (!inner) throw new Error('WaitWatcher: the server has no SpaceWatch');
    const wrapped: SpaceWatch = {
      watch: async (spaceId, onEvent) => {
        const stop = await inner.watch(spaceId, onEvent);
        this.counts.set(spaceId, (this.counts.get(spaceId) ?? 0) + 1);
        for (const wake of this.wakers.splice(0)) wake();
        return () => {
          this.counts.set(spaceId, (this.counts.get(spaceId) ?? 1) - 1);
          stop();
        };
      },
    };
    srv.server.deps.watch = wrapped;
  }

  /** Resolves once `count` waits on the space are subscribed (up to `timeoutMs`). */
  async waiting(spaceId: string, count = 1, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ((this.counts.get(spaceId) ?? 0) < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no wait on space ${spaceId} after ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 250));
        this.wakers.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}
