// A node leaving a load balancer's rotation (trial s26, finding 10): while it drains, readiness
// fails and everything else is still served, on connections closed after each answer.
import { describe, expect, it } from 'vitest';
import { expectError, expectOk, withServer } from './helpers';

describe('a draining node', () => {
  it('answers its health probe 503 shutting_down and still serves every other request', async () => {
    await withServer({}, async ({ srv, h }) => {
      const space = await h.createSpace();
      const ready = await h.get('/api/health');
      expectOk(ready);
      expect(ready.headers.get('connection')).not.toBe('close');

      const cut = new AbortController();
      let drained = false;
      const draining = srv.server.drain(60_000, cut.signal).then(() => (drained = true));
      for (const probe of [await h.get('/api/health'), await h.get('/api/health?x=1')]) {
        expectError(probe, 503);
        expect(probe.body).toEqual({
          error: 'the server is shutting down; retry shortly',
          code: 'shutting_down',
        });
        expect(probe.headers.get('retry-after')).toBe('2');
        expect(probe.headers.get('connection')).toBe('close');
      }
      expect((await h.request('HEAD', '/api/health')).status).toBe(503);
      // Reads, writes and pages are served, each on a connection closed after its answer.
      const served = [
        await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey }),
        await h.post(`/hub/space/${space.spaceId}/messages`, {
          key: space.ownerKey,
          body: { content: 'still here' },
        }),
        await h.get('/openapi.json'),
      ];
      for (const res of served) {
        expectOk(res);
        expect(res.headers.get('connection')).toBe('close');
      }
      // Until the drain is cut short (or its time is up): then the node closes.
      expect(drained).toBe(false);
      cut.abort();
      await draining;
      expect(drained).toBe(true);
    });
  });

  it('ends when its time is up, or at once without one', async () => {
    await withServer({}, async ({ srv, h }) => {
      let started = Date.now();
      await srv.server.drain(300);
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
      started = Date.now();
      await srv.server.drain(0);
      expect(Date.now() - started).toBeLessThan(100);
      expectError(await h.get('/api/health'), 503);
    });
  });
});
