import { describe, expect, it } from 'vitest';
import { useDeployment } from './support/deployment';
import { countBy, percentile, report } from './support/figures';
import { allMessages, call, sleep, waitFor } from './support/http';
import { reconcile, sameSequence, startSending } from './support/load';
import { restartPostgres } from './support/postgres';

const SENDERS = 20;
/** How long PostgreSQL stays down: long enough for every kind of failure to be met. */
const DOWN_SECONDS = 3;

/**
 * PostgreSQL restarted (fast shutdown, a few seconds down, started again) under 20 retrying
 * senders on two nodes: no 500, every failed request answered 503 with Retry-After within 30 s,
 * nothing lost or stored twice, and the nodes recover by themselves (no restart), their streams
 * included.
 */
describe('PostgreSQL restarting under load', () => {
  const deployment = useDeployment();

  it('answers 503 while it is away, loses nothing, and recovers by itself', async () => {
    const a = await deployment.start();
    const b = await deployment.start();
    const { space, keys, reader, poller, load } = await startSending({
      nodes: [a.url, b.url],
      readerNode: a.url,
      pollerNode: b.url,
      senders: SENDERS,
      spaceName: 'Outage',
    });

    await waitFor(() => load.acknowledged().length >= 400, 60_000, '400 acknowledged sends');
    // A readiness probe on node A every 200 ms throughout: 503 with Retry-After while the database
    // is away (the probe asks it), 200 again once it is back.
    const probes: { status: number; retryAfter: string | null }[] = [];
    let probing = true;
    const prober = (async () => {
      while (probing) {
        const res = await fetch(`${a.url}/api/health`).catch(() => undefined);
        if (res) probes.push({ status: res.status, retryAfter: res.headers.get('retry-after') });
        await res?.arrayBuffer();
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    const downAt = Date.now();
    await restartPostgres(DOWN_SECONDS);
    const upAt = Date.now();
    const before = load.acknowledged().length;
    await waitFor(() => load.acknowledged().length >= before + 400, 60_000, '400 sends after the restart');
    await load.stop();
    probing = false;
    await prober;
    // Seconds after the return, every pool connection of both nodes at work at once: a
    // connection whose session the shutdown ended under a query answers as any other (postgres.js
    // kept that session's 57P01 for the next one, a 503 whenever the pool reopened it).
    await sleep(3_000);
    const burst = (
      await Promise.all(
        [0, 1, 2].map(async (round) => {
          await sleep(round * 1_000);
          return Promise.all(
            [a.url, b.url].flatMap((node) =>
              Array.from({ length: 30 }, () =>
                call(
                  'GET',
                  `${node}/hub/space/${space.spaceId}/messages?timestamp=${new Date().toISOString()}`,
                  {
                    key: space.ownerKey,
                  },
                ),
              ),
            ),
          );
        }),
      )
    ).flat();

    const stored = await allMessages(a.url, space.spaceId, space.ownerKey);
    const ledger = reconcile(load.sends, stored);
    await poller.catchUp();
    await waitFor(() => reader.messages().length >= stored.length, 30_000, 'the stream to catch up');
    await reader.stop();

    const attempts = load.attempts();
    const failed = attempts.filter((x) => x.status !== 200);
    const firstAckAfterUp = Math.min(
      ...load.acknowledged().flatMap((s) => (s.ackedAt! >= upAt ? [s.ackedAt!] : [])),
    );
    const figures = {
      acknowledged: ledger.acknowledged,
      lost: ledger.lost,
      duplicated: ledger.duplicated,
      storedUnacknowledged: ledger.unacknowledged,
      answersByStatus: countBy(attempts.map((x) => x.status)),
      unansweredBy: countBy(failed.flatMap((x) => (x.failure ? [x.failure] : []))),
      maxFailedAnswerMs: Math.max(0, ...failed.map((x) => x.answeredAt - x.sentAt)),
      p99AnswerMs: percentile(
        attempts.map((x) => x.answeredAt - x.sentAt),
        99,
      ),
      outageMs: upAt - downAt,
      firstAckAfterRestartMs: firstAckAfterUp - upAt,
      sendsRetried: load.sends.filter((s) => s.attempts.length > 1).length,
      replayedAfterRetry: load.sends.filter((s) => s.attempts.length > 1 && s.replayed).length,
      streamReconnects: reader.reconnects,
      pollerFailedPolls: poller.failures,
      healthProbesByStatus: countBy(probes.map((p) => p.status)),
      burstAfterReturnByStatus: countBy(burst.map((x) => x.status)),
    };
    report('PostgreSQL restart', figures);

    expect(failed.length).toBeGreaterThan(0);
    // The probe said the database was away, as a 503 with Retry-After, and never anything but 200
    // or that; its last answer is 200.
    expect(probes.filter((p) => p.status === 503).length).toBeGreaterThan(0);
    expect(probes.filter((p) => p.status !== 200 && p.status !== 503)).toEqual([]);
    for (const p of probes) if (p.status === 503) expect(p.retryAfter).toMatch(/^\d+$/);
    expect(probes.at(-1)?.status).toBe(200);
    expect(failed.filter((x) => x.status !== 503)).toEqual([]);
    for (const x of failed) expect(x.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(figures.maxFailedAnswerMs).toBeLessThanOrEqual(30_000);
    expect(burst.filter((x) => x.status !== 200).map((x) => [x.status, x.body])).toEqual([]);
    expect(load.sends.filter((s) => s.refused)).toEqual([]);
    expect(ledger.lost).toBe(0);
    expect(ledger.duplicated).toBe(0);
    expect(ledger.unacknowledged).toBe(0);
    expect(
      sameSequence(
        reader.messages().map((e) => e.data),
        stored,
      ),
    ).toBe(true);
    expect(sameSequence(poller.messages, stored)).toBe(true);
    // No key, and no statement with its values, in what the nodes logged about the outage.
    for (const node of [a, b]) {
      const output = node.output();
      expect(output).toMatch(/unavailable/);
      expect(output).not.toMatch(/Failed query|params:/);
      for (const key of [space.ownerKey, ...keys]) expect(output).not.toContain(key);
    }
  }, 240_000);
});
