import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv } from '@convene/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOk, onPostgres, type SpaceFixture, useServer } from './helpers';
import { WaitWatcher } from './helpers/waits';
import { WebhookReceiver } from './helpers/webhook-receiver';

const here = dirname(fileURLToPath(import.meta.url));
const webhookConfig = {
  webhookUrls: { allowPrivate: false, allowNetworks: ['127.0.0.1'] },
  webhookRetryDelaysMs: [200, 200, 200],
  webhookPollMs: 1000,
};

/** Agents on two nodes of one PostgreSQL database: nothing they are told depends on the node. */
describe.runIf(onPostgres())('agents across two nodes', () => {
  const { srv: a, h: onA } = useServer({ config: webhookConfig });
  const { srv: b, h: onB } = useServer(() => ({ databaseUrl: a.databaseUrl!, config: webhookConfig }));
  let waitsOnB: WaitWatcher;
  beforeAll(() => {
    waitsOnB = new WaitWatcher(b);
  });

  const send = (space: SpaceFixture, key: string, body: Record<string, unknown>, on = onA) =>
    on.post(`/hub/space/${space.spaceId}/messages`, { key, body });

  it('wakes a long poll on node B as soon as a message is sent on node A', async () => {
    const space = await onA.createSpace();
    const reader = await onA.joinActive(space, { name: 'Reader' });
    const latencies: number[] = [];
    let cursor = (await onB.get(`/hub/space/${space.spaceId}/messages`, { key: reader.key })).body.cursor;
    for (let round = 0; round < 10; round++) {
      const polling = onB.get(
        `/hub/space/${space.spaceId}/messages?wait=30&timestamp=${encodeURIComponent(cursor)}`,
        { key: reader.key },
      );
      const inboxPolling = onB.get(`/hub/space/${space.spaceId}/inbox?wait=30`, { key: reader.key });
      // Both are waiting on node B before node A sends.
      await waitsOnB.waiting(space.spaceId, 2);
      const sentAt = performance.now();
      const sent = await send(space, space.ownerKey, {
        content: `round ${round}`,
        mentions: [reader.participantId],
      });
      expectOk(sent);
      const [polled, inbox] = await Promise.all([polling, inboxPolling]);
      latencies.push(performance.now() - sentAt);
      expectOk(polled);
      expectOk(inbox);
      // Answered with the message, so woken by it: a wait that times out answers nothing new.
      expect(polled.body.messages.map((m: any) => m.id)).toEqual([sent.body.messageId]);
      expect(inbox.body.messages.map((m: any) => m.id)).toEqual([sent.body.messageId]);
      expectOk(
        await onB.post(`/hub/space/${space.spaceId}/inbox/ack`, {
          key: reader.key,
          body: { seq: round + 1 },
        }),
      );
      cursor = polled.body.cursor;
    }
    // The wake latencies, from the send on A to both polls answered on B (the send's own round
    // trip included): within 1 s as a rule, bounded generously for a loaded machine. A wait that
    // timed out would take 30 s, so even the bound tells a wake from a timeout.
    if (process.env.REPORT_LATENCY)
      console.info(`long-poll wake across nodes, ms: ${latencies.map(Math.round).join(' ')}`);
    const sorted = [...latencies].sort((x, y) => x - y);
    expect(sorted[Math.floor(sorted.length / 2)]).toBeLessThan(1000);
    expect(sorted.at(-1)).toBeLessThan(5000);
  });

  it('an inbox reader killed and restarted, on either node, loses and repeats nothing', async () => {
    const space = await onA.createSpace({ ownerName: 'Olga' });
    const reader = await onA.joinActive(space, { name: 'Reader' });
    const writer = await onA.joinActive(space, { name: 'Writer' });
    const dir = mkdtempSync(join(tmpdir(), 'convene-inbox-'));
    const log = join(dir, 'handled.log');
    const total = 60;
    const sent: string[] = [];
    let child: ChildProcess | undefined;
    const start = (node: string) => {
      // node itself with tsx's loader, so SIGKILL kills the reader (tsx's CLI would leave its child).
      child = spawn(
        process.execPath,
        ['--import', 'tsx', join(here, 'helpers/inbox-reader.ts'), node, space.spaceId, reader.key, log],
        { cwd: join(here, '..'), env: childEnv(), stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.once('exit', (code, signal) => {
        if (signal !== 'SIGKILL' && code !== 0) console.error(`inbox reader exited ${code}: ${stderr}`);
      });
    };
    const lines = () => {
      try {
        return statSync(log).size === 0 ? [] : readFileSync(log, 'utf8').trim().split('\n');
      } catch {
        return [];
      }
    };
    const handledAtLeast = async (count: number) => {
      const deadline = Date.now() + 60_000;
      while (lines().length < count) {
        if (Date.now() > deadline) throw new Error(`the reader handled ${lines().length} of ${count}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    try {
      // Mentions and replies arrive on both nodes while the reader runs, dies and comes back.
      const sending = (async () => {
        let previous: string | undefined;
        for (let i = 0; i < total; i++) {
          const body =
            i % 3 === 2 && previous
              ? { content: `reply ${i}`, replyTo: previous }
              : { content: `@Reader number ${i}` };
          const res = await send(space, i % 2 ? writer.key : space.ownerKey, body, i % 2 ? onB : onA);
          expectOk(res);
          sent.push(res.body.messageId);
          // The reader's own message, so the next reply replies to one of theirs.
          const own = await send(space, reader.key, { content: `ack ${i}` }, i % 2 ? onA : onB);
          previous = own.body.messageId;
        }
      })();
      const nodes = [a.listenUrl, b.listenUrl];
      for (let life = 0; life < 4; life++) {
        start(nodes[life % 2]!);
        // Killed at a different point of its work each time: mid-page, between handling and acknowledging.
        await handledAtLeast(Math.min(total, (life + 1) * 12 + life));
        child?.kill('SIGKILL');
        await new Promise((resolve) => child?.once('exit', resolve));
      }
      await sending;
      start(nodes[0]!);
      await handledAtLeast(total);
      // Give a repeat (which would be a bug) the chance to show before looking.
      await new Promise((resolve) => setTimeout(resolve, 500));
      child?.kill('SIGKILL');

      const handled = lines().map((line) => line.split(' ')[1]);
      expect(handled).toEqual(sent);
      const inbox = await onA.get(`/hub/space/${space.spaceId}/inbox`, { key: reader.key });
      expect(inbox.body.messages).toEqual([]);
      expect(inbox.body.unread).toMatchObject({ inbox: 0 });
    } finally {
      child?.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('webhooks', () => {
    let receiver: WebhookReceiver;
    beforeAll(async () => {
      receiver = await WebhookReceiver.start();
    });
    afterAll(() => receiver.close());

    it('delivers each event once although both nodes deliver, through failures', async () => {
      const space = await onA.createSpace();
      const guest = await onA.joinActive(space, { name: 'Hooked' });
      const created = await onB.post(`/hub/space/${space.spaceId}/webhooks`, {
        key: guest.key,
        body: { url: `${receiver.url}/two-nodes` },
      });
      expectOk(created, 201);
      const mine = () => receiver.received.filter((d) => JSON.parse(d.body).spaceId === space.spaceId);
      // Every first attempt fails: the retry may be made by either node.
      receiver.answer = (_delivery, attempt) => (attempt === 1 ? 503 : 200);
      try {
        const ids: string[] = [];
        for (let i = 0; i < 20; i++) {
          const res = await send(space, space.ownerKey, { content: `m${i}` }, i % 2 ? onB : onA);
          ids.push(res.body.messageId);
        }
        await receiver.until(() => mine().filter((d) => d.status === 200).length >= 20, 30_000);
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const accepted = mine().filter((d) => d.status === 200);
        expect(accepted.map((d) => JSON.parse(d.body).data.id).sort()).toEqual([...ids].sort());
        // Two attempts per event, never more: no node attempted one another node held.
        const attempts = new Map<string, number>();
        for (const d of mine())
          attempts.set(
            String(d.headers['webhook-id']),
            (attempts.get(String(d.headers['webhook-id'])) ?? 0) + 1,
          );
        expect([...attempts.values()]).toEqual(Array(20).fill(2));
      } finally {
        receiver.answer = () => 200;
      }
    });
  });
});
