import { STREAM_NODE_LEASE_SECONDS } from '@convene/core';
import { describe, expect, it } from 'vitest';
import { Harness } from '../test/helpers/factories';
import { useDeployment } from './support/deployment';
import { report } from './support/figures';
import { SseReader, sleep } from './support/http';

/** decisions.md: at most 20 open streams per credential (429 beyond), across every node. */
const PER_KEY = 20;

/**
 * The open-stream caps hold across two nodes, and a node's streams stop counting once it is gone:
 * at once when it stops (SIGTERM), within its lease after kill -9, so the clients it served can
 * open their streams again on the other node.
 */
describe('stream caps across nodes', () => {
  const deployment = useDeployment();

  it('counts one key’s streams on both nodes, and frees a dead node’s share', async () => {
    const victim = await deployment.start();
    const survivor = await deployment.start();
    const space = await new Harness(victim.url).createSpace({ name: 'Many eyes' });
    const open = (url: string) => SseReader.open(url, space.spaceId, { key: space.ownerKey });
    const refusal = (url: string) =>
      open(url).then(
        (stream) => {
          stream.close();
          return 'opened';
        },
        (error: Error) => error.message,
      );

    const onVictim = await Promise.all(Array.from({ length: 12 }, () => open(victim.url)));
    const onSurvivor = await Promise.all(Array.from({ length: PER_KEY - 12 }, () => open(survivor.url)));
    expect(await refusal(survivor.url)).toBe('stream answered 429');
    expect(await refusal(victim.url)).toBe('stream answered 429');

    // kill -9: the victim's 12 slots count until its lease lapses, then the survivor admits them.
    await victim.kill9();
    const killedAt = Date.now();
    while (onSurvivor.length < PER_KEY && Date.now() - killedAt < 30_000) {
      try {
        onSurvivor.push(await open(survivor.url));
      } catch {
        await sleep(200);
      }
    }
    const reopenedAfterMs = Date.now() - killedAt;
    expect(onSurvivor.filter((s) => !s.ended)).toHaveLength(PER_KEY);
    // The lease, one renewal interval of slack, and the polling above.
    expect(reopenedAfterMs).toBeLessThan((STREAM_NODE_LEASE_SECONDS + 6) * 1000);
    expect(await refusal(survivor.url)).toBe('stream answered 429');

    // A node that stops gives its slots back as it goes: the restarted node admits them at once.
    const restarted = await deployment.start({ port: victim.port });
    await survivor.stop();
    const stoppedAt = Date.now();
    const again = await Promise.all(Array.from({ length: PER_KEY }, () => open(restarted.url)));
    const reopenedAfterStopMs = Date.now() - stoppedAt;
    expect(await refusal(restarted.url)).toBe('stream answered 429');
    report('stream caps across nodes', {
      leaseSeconds: STREAM_NODE_LEASE_SECONDS,
      reopenedAfterKillMs: reopenedAfterMs,
      reopenedAfterStopMs,
    });
    for (const stream of [...onVictim, ...onSurvivor, ...again]) stream.close();
  }, 120_000);
});
