import { describe, expect, it } from 'vitest';
import { Harness } from '../test/helpers/factories';
import { useDeployment } from './support/deployment';
import { countBy, percentile, report } from './support/figures';
import { type Answer, call, SseReader, sleep, waitFor } from './support/http';

const RACE_MS = 15_000;
const LOCK_TTL_S = 2;
/** Contenders per node, and writers per node that never take the lock. */
const CONTENDERS = 4;
const INTRUDERS = 2;

/**
 * Two nodes racing for one artifact's lock for 15 s, with a 2 s lock TTL: contenders lock, write,
 * sometimes stall past the TTL before writing again, and unlock; intruders write without the
 * lock. The space's events, replayed from the start, must show one holder at a time, every
 * accepted write made by the holder before its lock lapsed, and nothing else accepted.
 */
describe('two nodes racing for one lock', () => {
  const deployment = useDeployment();

  it('never has two holders, and accepts no write from anyone but the holder', async () => {
    const env = { LOCK_TTL_S: String(LOCK_TTL_S) };
    const nodes = [await deployment.start({ env }), await deployment.start({ env })];
    const h = new Harness(nodes[0]!.url);
    const space = await h.createSpace({ name: 'One pen' });
    const created = await call('POST', `${nodes[0]!.url}/hub/space/${space.spaceId}/artifact`, {
      key: space.ownerKey,
      body: { name: 'contested.md', type: 'markdown', content: 'v1' },
    });
    expect(created.status).toBe(200);
    const artifact = `/hub/space/${space.spaceId}/artifact/${created.body.id}`;

    const contenders: Contender[] = [];
    const intruders: Contender[] = [];
    for (const [i, node] of nodes.entries()) {
      for (let c = 0; c < CONTENDERS; c++) {
        const joined = await h.joinActive(space, { name: `contender ${i}.${c}` });
        // Half of them stall past the TTL in each turn, then try one more write.
        contenders.push({ node: node.url, ...joined, stalls: c % 2 === 1, writes: [], locks: [], late: [] });
      }
      for (let c = 0; c < INTRUDERS; c++) {
        const joined = await h.joinActive(space, { name: `intruder ${i}.${c}` });
        intruders.push({ node: node.url, ...joined, stalls: false, writes: [], locks: [], late: [] });
      }
    }

    const until = Date.now() + RACE_MS;
    await Promise.all([
      ...contenders.map((c) => contend(c, artifact, until)),
      ...intruders.map((c) => intrude(c, artifact, until)),
    ]);

    // Every event of the space, replayed from the start on the other node.
    const events = await SseReader.open(nodes[1]!.url, space.spaceId, {
      key: space.ownerKey,
      lastEventId: 0,
    });
    const last = await call('GET', `${nodes[1]!.url}${artifact}/versions`, { key: space.ownerKey });
    const version = last.body.versions[0].version;
    await waitFor(
      () => events.events.some((e) => e.event === 'artifact-updated' && e.data.version === version),
      20_000,
      'the replay of the last write',
    );
    events.close();
    const violations = checkLockEvents(events.events.filter((e) => e.event.startsWith('artifact-')));

    const contenderWrites = contenders.flatMap((c) => c.writes);
    const accepted = contenderWrites.filter((w) => w.status === 200);
    const figures = {
      lockAttempts: contenders.reduce((n, c) => n + c.locks.length, 0),
      locksTaken: contenders.reduce((n, c) => n + c.locks.filter((l) => l.status === 200).length, 0),
      lockAnswers: countBy(contenders.flatMap((c) => c.locks.map((l) => l.status))),
      writesAccepted: accepted.length,
      holderWritesRefused: contenderWrites.filter((w) => w.status !== 200).length,
      lateWrites: countBy(contenders.flatMap((c) => c.late.map((w) => w.status))),
      intruderWrites: countBy(intruders.flatMap((c) => c.writes.map((w) => w.status))),
      lockEvents: countBy(events.events.filter((e) => e.event.startsWith('artifact-')).map((e) => e.event)),
      finalVersion: version,
      p50LockMs: percentile(
        contenders.flatMap((c) => c.locks.map((l) => l.answeredAt - l.sentAt)),
        50,
      ),
      p99LockMs: percentile(
        contenders.flatMap((c) => c.locks.map((l) => l.answeredAt - l.sentAt)),
        99,
      ),
      violations: violations.length,
    };
    report('two nodes racing for one lock', figures);

    expect(violations).toEqual([]);
    // A real race: many refusals, several turns, lapsed locks taken over.
    expect(figures.lockAnswers['423']).toBeGreaterThan(20);
    expect(figures.locksTaken).toBeGreaterThan(4);
    // Nothing but 423 for writers without the lock, and for holders whose lock lapsed meanwhile.
    expect(Object.keys(figures.intruderWrites)).toEqual(['423']);
    expect(Object.keys(figures.lateWrites)).toEqual(['423']);
    // Each accepted write is one version, and nothing else made one.
    expect(version).toBe(
      1 + accepted.length + contenders.flatMap((c) => c.late).filter((w) => w.status === 200).length,
    );
    expect(contenders.flatMap((c) => [...c.locks, ...c.writes]).filter((a) => a.status >= 500)).toEqual([]);
  }, 120_000);
});

interface Contender {
  node: string;
  participantId: string;
  key: string;
  stalls: boolean;
  locks: Answer[];
  writes: Answer[];
  /** Writes made after stalling past the lock's TTL. */
  late: Answer[];
}

/** Lock, write once or twice, perhaps stall past the TTL and write again, unlock; repeat. */
async function contend(c: Contender, artifact: string, until: number): Promise<void> {
  for (let round = 0; Date.now() < until; ) {
    const lock = await call('POST', `${c.node}${artifact}/lock`, { key: c.key });
    c.locks.push(lock);
    if (lock.status !== 200) {
      await sleep(10 + Math.random() * 40);
      continue;
    }
    round++;
    const writes = 1 + (round % 2);
    for (let w = 0; w < writes; w++) {
      c.writes.push(
        await call('PATCH', `${c.node}${artifact}`, {
          key: c.key,
          body: { content: `${c.participantId} ${round}.${w}` },
        }),
      );
    }
    if (c.stalls) {
      await sleep(LOCK_TTL_S * 1000 + 500);
      c.late.push(
        await call('PATCH', `${c.node}${artifact}`, {
          key: c.key,
          body: { content: `${c.participantId} late` },
        }),
      );
    }
    await call('DELETE', `${c.node}${artifact}/lock`, { key: c.key });
  }
}

/** Writes without ever taking the lock. */
async function intrude(c: Contender, artifact: string, until: number): Promise<void> {
  while (Date.now() < until) {
    c.writes.push(
      await call('PATCH', `${c.node}${artifact}`, {
        key: c.key,
        body: { content: `${c.participantId} intrudes` },
      }),
    );
    await sleep(50);
  }
}

/**
 * The space's artifact events, in event order, as a lock's history: a lock is taken only when
 * free (a lapsed one is announced unlocked first), and every write is the holder's, made before
 * its lock lapsed (each write refreshes it).
 */
function checkLockEvents(events: { id: number | undefined; event: string; data: any }[]): string[] {
  const violations: string[] = [];
  let holder: string | undefined;
  let expires = '';
  for (const { id, event, data } of events) {
    if (event === 'artifact-locked') {
      if (holder !== undefined) violations.push(`${id}: ${data.lockedBy} locked while ${holder} held it`);
      holder = data.lockedBy;
      expires = data.lockExpiresAt;
    } else if (event === 'artifact-unlocked') {
      holder = undefined;
    } else if (event === 'artifact-updated') {
      if (data.lockedBy !== holder) violations.push(`${id}: written by ${data.lockedBy}, held by ${holder}`);
      else if (Date.parse(data.updatedAt) >= Date.parse(expires))
        violations.push(`${id}: written at ${data.updatedAt}, after the lock lapsed at ${expires}`);
      expires = data.lockExpiresAt;
    }
  }
  return violations;
}
