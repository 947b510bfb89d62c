import { limits } from '@convene/contract';
import { newId, schema } from '@convene/core';
import { and, asc, eq, like } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  expectOk,
  type Harness,
  onPostgres,
  type ParticipantFixture,
  type SpaceFixture,
  type TestServer,
  useServer,
} from './helpers';

// Many participants racing for one lock, many times: on one node (PGlite and PostgreSQL) and on
// two nodes sharing one PostgreSQL. Never two holders at once; every successful write counted.
// They make hundreds of requests, so they get more time than the default on a busy machine.
const RACE_TIMEOUT_MS = 120_000;

interface Race {
  space: SpaceFixture;
  artifactId: string;
  participants: ParticipantFixture[];
}

async function setUpRace(h: Harness, count: number): Promise<Race> {
  const space = await h.createSpace();
  const participants = [{ participantId: space.ownerId, key: space.ownerKey }];
  for (let i = 1; i < count; i++) participants.push(await h.joinActive(space, { name: `Racer ${i}` }));
  const res = await h.post(`/hub/space/${space.spaceId}/artifact`, {
    key: space.ownerKey,
    body: { name: 'Contested', type: 'markdown', content: 'start\n' },
  });
  expectOk(res);
  return { space, artifactId: res.body.id, participants };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Everyone fires a lock request at the same moment, `rounds` times: exactly one wins each round,
 * every loser is told the winner; the winner writes and unlocks before the next round.
 */
async function simultaneousRounds(nodes: Harness[], race: Race, rounds: number): Promise<number> {
  const path = `/hub/space/${race.space.spaceId}/artifact/${race.artifactId}`;
  let writes = 0;
  for (let round = 0; round < rounds; round++) {
    const results = await Promise.all(
      race.participants.map((p, i) => nodes[i % nodes.length]!.post(`${path}/lock`, { key: p.key })),
    );
    const winners = results.flatMap((res, i) => (res.status === 200 ? [race.participants[i]!] : []));
    expect(winners, `round ${round}`).toHaveLength(1);
    const winner = winners[0]!;
    for (const res of results) {
      if (res.status === 200) expect(res.body.lockedBy).toBe(winner.participantId);
      else {
        expect(res.status, res.text).toBe(423);
        expect(res.body.lockedBy).toBe(winner.participantId);
      }
    }
    const node = nodes[race.participants.indexOf(winner) % nodes.length]!;
    expectOk(await node.patch(path, { key: winner.key, body: { content: `round ${round}\n` } }));
    writes++;
    expectOk(await node.delete(`${path}/lock`, { key: winner.key }));
  }
  return writes;
}

/**
 * Each participant loops lock → write → unlock `cycles` times, retrying on 423. A shared flag
 * records who holds the lock according to the server's answers; it is cleared before the unlock
 * is sent, so a second holder can only show up if the server granted two locks at once.
 */
async function freeForAll(nodes: Harness[], race: Race, cycles: number) {
  const path = `/hub/space/${race.space.spaceId}/artifact/${race.artifactId}`;
  let holder: string | null = null;
  let overlaps = 0;
  let writes = 0;
  let refusals = 0;
  await Promise.all(
    race.participants.map(async (p, i) => {
      const node = nodes[i % nodes.length]!;
      for (let done = 0; done < cycles; ) {
        const lock = await node.post(`${path}/lock`, { key: p.key });
        if (lock.status === 423) {
          expect(typeof lock.body.lockedBy).toBe('string');
          expect(lock.body.lockedBy).not.toBe(p.participantId);
          refusals++;
          await pause(2 + Math.random() * 8);
          continue;
        }
        expect(lock.status, lock.text).toBe(200);
        if (holder !== null) overlaps++;
        holder = p.participantId;
        const write = await node.patch(path, {
          key: p.key,
          body: { content: `${p.participantId} #${done}\n` },
        });
        expect(write.status, write.text).toBe(200);
        expect(write.body.updatedBy).toBe(p.participantId);
        writes++;
        if (holder !== p.participantId) overlaps++;
        holder = null;
        expectOk(await node.delete(`${path}/lock`, { key: p.key }));
        done++;
      }
    }),
  );
  return { overlaps, writes, refusals };
}

/** What the database recorded: the version, the history, and the lock/write event sequence. */
async function verifyRecord(srv: TestServer, race: Race, writes: number) {
  const db = srv.server.database.db;
  const { artifacts, artifactVersions, spaceEvents } = schema;
  const [artifact] = await db
    .select()
    .from(artifacts)
    .where(and(eq(artifacts.spaceId, race.space.spaceId), eq(artifacts.id, race.artifactId)));
  expect(artifact?.version).toBe(1 + writes);
  expect(artifact?.lockedBy).toBeNull();

  const versions = await db
    .select({ version: artifactVersions.version, updatedBy: artifactVersions.updatedBy })
    .from(artifactVersions)
    .where(
      and(eq(artifactVersions.spaceId, race.space.spaceId), eq(artifactVersions.artifactId, race.artifactId)),
    )
    .orderBy(asc(artifactVersions.version));
  expect(versions.map((v) => v.version)).toEqual(Array.from({ length: 1 + writes }, (_, i) => i + 1));

  // Replaying the events: a lock is only ever taken when free, and every write is by the holder.
  const events = await db
    .select({ kind: spaceEvents.kind, data: spaceEvents.data })
    .from(spaceEvents)
    .where(and(eq(spaceEvents.spaceId, race.space.spaceId), like(spaceEvents.kind, 'artifact-%')))
    .orderBy(asc(spaceEvents.seq));
  let holder: string | null = null;
  const writers: string[] = [];
  for (const { kind, data } of events as { kind: string; data: { lockedBy?: string; version: number } }[]) {
    if (kind === 'artifact-locked') {
      expect(holder, 'a lock was granted while held').toBeNull();
      holder = data.lockedBy ?? null;
      expect(holder).not.toBeNull();
    } else if (kind === 'artifact-updated') {
      expect(data.lockedBy).toBe(holder);
      writers.push(data.lockedBy!);
    } else if (kind === 'artifact-unlocked') {
      expect(holder).not.toBeNull();
      holder = null;
    }
  }
  expect(writers).toHaveLength(writes);
  expect(writers).toEqual(versions.slice(1).map((v) => v.updatedBy));
}

describe('one node', () => {
  const { srv, h } = useServer();

  it(
    'grants exactly one of many simultaneous lock requests, round after round',
    async () => {
      const race = await setUpRace(h, 8);
      const writes = await simultaneousRounds([h], race, 10);
      await verifyRecord(srv, race, writes);
    },
    RACE_TIMEOUT_MS,
  );

  it(
    'never has two holders while participants lock, write and unlock in a free-for-all',
    async () => {
      const race = await setUpRace(h, 6);
      const { overlaps, writes } = await freeForAll([h], race, 6);
      expect(overlaps).toBe(0);
      expect(writes).toBe(36);
      await verifyRecord(srv, race, writes);
    },
    RACE_TIMEOUT_MS,
  );

  it('stops concurrent creators at exactly 1,000 artifacts', async () => {
    const space = await h.createSpace();
    await fillArtifacts(srv, space, limits.artifactsPerSpace - 5);
    const results = await Promise.all(
      Array.from({ length: 15 }, (_, i) =>
        h.post(`/hub/space/${space.spaceId}/artifact`, {
          key: space.ownerKey,
          body: { name: `late ${i}`, type: 'markdown' },
        }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    expect(results.filter((r) => r.status === 409)).toHaveLength(10);
    const list = await h.get(`/hub/space/${space.spaceId}/artifact`, { key: space.ownerKey });
    expect(list.body.artifacts).toHaveLength(limits.artifactsPerSpace);
  });
});

describe.runIf(onPostgres())('two nodes on one PostgreSQL', () => {
  const { srv: a, h: ha } = useServer();
  const { srv: b, h: hb } = useServer(() => ({ databaseUrl: a.databaseUrl! }));

  it(
    'grants exactly one of many simultaneous lock requests across nodes, round after round',
    async () => {
      const race = await setUpRace(ha, 10);
      const writes = await simultaneousRounds([ha, hb], race, 12);
      await verifyRecord(a, race, writes);
    },
    RACE_TIMEOUT_MS,
  );

  it(
    'never has two holders in a free-for-all across nodes, and counts every write',
    async () => {
      const race = await setUpRace(hb, 8);
      const { overlaps, writes } = await freeForAll([ha, hb], race, 6);
      expect(overlaps).toBe(0);
      expect(writes).toBe(48);
      await verifyRecord(b, race, writes);
    },
    RACE_TIMEOUT_MS,
  );

  it('stops concurrent creators on both nodes at exactly 1,000 artifacts', async () => {
    const space = await ha.createSpace();
    await fillArtifacts(a, space, limits.artifactsPerSpace - 6);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? ha : hb).post(`/hub/space/${space.spaceId}/artifact`, {
          key: space.ownerKey,
          body: { name: `late ${i}`, type: 'markdown' },
        }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(6);
    expect(results.filter((r) => r.status === 409)).toHaveLength(14);
    const list = await hb.get(`/hub/space/${space.spaceId}/artifact`, { key: space.ownerKey });
    expect(list.body.artifacts).toHaveLength(limits.artifactsPerSpace);
  });
});

async function fillArtifacts(srv: TestServer, space: SpaceFixture, count: number) {
  const now = new Date();
  await srv.server.database.db.insert(schema.artifacts).values(
    Array.from({ length: count }, (_, i) => ({
      spaceId: space.spaceId,
      id: newId(),
      name: `bulk ${i}`,
      type: 'markdown' as const,
      content: '',
      version: 1,
      createdBy: space.ownerId,
      updatedBy: space.ownerId,
      createdAt: now,
      updatedAt: now,
    })),
  );
}
