import { describe, expect, it } from 'vitest';
import { useDeployment } from './support/deployment';
import { countBy, percentile, report } from './support/figures';
import { allMessages, call, sleep, waitFor } from './support/http';
import { type LogicalSend, reconcile, sameSequence, startSending } from './support/load';

const SENDERS = 20;

/**
 * kill -9 of one of two nodes while 20 senders post through both and retry with their
 * Idempotency-Keys: nothing acknowledged is lost, nothing is stored twice, every retry is answered
 * within 10 s (a write the dead node committed is replayed, not run again), and a stream reader
 * and a cursor poller on the other node see every message once, in order.
 */
describe('kill -9 of a node under concurrent senders', () => {
  const deployment = useDeployment();

  it('loses nothing acknowledged, stores nothing twice, and answers retries within 10 s', async () => {
    const victim = await deployment.start();
    const survivor = await deployment.start();
    const { space, keys, reader, poller, load } = await startSending({
      nodes: [victim.url, survivor.url],
      readerNode: survivor.url,
      pollerNode: survivor.url,
      senders: SENDERS,
      spaceName: 'Under fire',
    });

    await waitFor(() => load.acknowledged().length >= 600, 60_000, '600 acknowledged sends');
    const killedAt = Date.now();
    await victim.kill9();
    // One send the victim acknowledged before it died, retried after: a replay, not a new message.
    const acknowledgedByVictim = load
      .acknowledged()
      .find((s) => s.attempts.at(-1)!.answeredAt < killedAt && s.attempts.at(-1)!.node === victim.url);
    await sleep(2000);
    await deployment.start({ port: victim.port });
    const sinceRestart = load.acknowledged().length;
    await waitFor(() => load.acknowledged().length >= sinceRestart + 600, 60_000, '600 more sends');
    await load.stop();

    expect(acknowledgedByVictim).toBeDefined();
    const retry = await call('POST', `${survivor.url}/hub/space/${space.spaceId}/messages`, {
      key: keys[acknowledgedByVictim!.sender],
      body: { content: acknowledgedByVictim!.content },
      headers: { 'Idempotency-Key': acknowledgedByVictim!.idempotencyKey },
    });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotency-replayed')).toBe('true');
    expect(retry.body.messageId).toBe(acknowledgedByVictim!.messageId);

    const stored = await allMessages(survivor.url, space.spaceId, space.ownerKey);
    const ledger = reconcile(load.sends, stored);
    await poller.catchUp();
    await waitFor(() => reader.messages().length >= stored.length, 30_000, 'the stream to catch up');
    await reader.stop();

    // Retries: every attempt after the first, and how long each send took from its first failure.
    const retried = load.sends.filter((s) => s.attempts.length > 1);
    const retryWaits = retried.map((s) => s.ackedAt! - firstFailure(s).answeredAt);
    const figures = {
      acknowledged: ledger.acknowledged,
      lost: ledger.lost,
      duplicated: ledger.duplicated,
      storedUnacknowledged: ledger.unacknowledged,
      refused: load.sends.filter((s) => s.refused).length,
      sendsRetried: retried.length,
      replayedAfterRetry: retried.filter((s) => s.replayed).length,
      answersByStatus: countBy(load.attempts().map((a) => a.status)),
      // ECONNREFUSED while the node was down; anything else was cut in flight by the kill.
      unansweredBy: countBy(load.attempts().flatMap((a) => (a.failure ? [a.failure] : []))),
      maxRetryToAckMs: Math.max(0, ...retryWaits),
      p99RetryToAckMs: percentile(retryWaits, 99),
      streamReconnects: reader.reconnects,
      streamMessages: reader.messages().length,
      pollerMessages: poller.messages.length,
    };
    report('kill -9 of a node', figures);

    expect(ledger.acknowledged).toBeGreaterThanOrEqual(1200);
    expect(load.sends.filter((s) => s.refused)).toEqual([]);
    expect(ledger.lost).toBe(0);
    expect(ledger.duplicated).toBe(0);
    expect(ledger.unacknowledged).toBe(0);
    expect(retried.length).toBeGreaterThan(0);
    expect(figures.maxRetryToAckMs).toBeLessThanOrEqual(10_000);
    expect(load.attempts().filter((a) => a.status >= 500 && a.status !== 503)).toEqual([]);
    // Every message once, in order, to the stream and to the poller.
    expect(
      sameSequence(
        reader.messages().map((e) => e.data),
        stored,
      ),
    ).toBe(true);
    expect(reader.messages().map((e) => e.data.seq)).toEqual(stored.map((_, i) => i + 1));
    expect(sameSequence(poller.messages, stored)).toBe(true);
  }, 240_000);
});

function firstFailure(send: LogicalSend) {
  return send.attempts.find((a) => a.status !== 200)!;
}
