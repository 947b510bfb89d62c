import Fastify from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { takeOver } from '../src/http/reply';
import { startRequestTimer } from '../src/http/timeout';

describe('the request timer', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('stops, with its listeners, when a reply is taken over by a stream or a long wait', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const app = Fastify();
    app.addHook('onRequest', async (request, reply) => startRequestTimer(request, reply, 30_000));
    const seen: Record<string, number[]> = {};
    app.get('/stream', async (_request, reply) => {
      const before = [
        vi.getTimerCount(),
        reply.raw.listenerCount('close'),
        reply.raw.listenerCount('finish'),
      ];
      const res = takeOver(reply);
      seen.stream = [...before, vi.getTimerCount(), res.listenerCount('close'), res.listenerCount('finish')];
      res.end('taken over');
    });
    app.get('/answer', async () => {
      seen.answer = [vi.getTimerCount()];
      return { ok: true };
    });
    try {
      expect((await app.inject({ url: '/stream' })).body).toBe('taken over');
      const [timers, close, finish, timersAfter, closeAfter, finishAfter] = seen.stream!;
      expect(timersAfter).toBe(timers! - 1);
      expect(closeAfter).toBe(close! - 1);
      expect(finishAfter).toBe(finish! - 1);

      // An answer keeps its timer until it is sent, then clears it.
      expect((await app.inject({ url: '/answer' })).json()).toEqual({ ok: true });
      expect(seen.answer![0]).toBeGreaterThanOrEqual(1);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      await app.close();
    }
  });
});
