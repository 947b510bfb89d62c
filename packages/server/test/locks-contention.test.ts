import { limits } from '@convene/contract';
import { newId, schema } from '@convene/core';
import { ConflictError, type ConveneError, LockedError, type SpaceClient } from '@convene/sdk';
import { and, asc, eq, like } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  expectAnswer,
  idOf,
  type OwnedSpace,
  onPostgres,
  type Sdk,
  type TestServer,
  useServer,
} from './helpers';

// Many participants racing for one lock, many times, each through its own SDK client: on one node
// (PGlite and PostgreSQL) and on two nodes sharing one PostgreSQL. Never two holders at once;
// every successful write counted. They make hundreds of requests, so they get more time than the
// default on a busy machine.
const RACE_TIMEOUT_MS = 120_000;

interface Racer {
  participantId: string;
  key: string;
}

interface Race {
  space: OwnedSpace;
  artifactId: string;
  participants: Racer[];
}

async function setUpRace(sdk: Sdk, count: number): Promise<Race> {
  const space = await sdk.createSpace();
  const participants: Racer[] = [{ participantId: space.ownerId, key: space.ownerKey }];
  for (let i = 1; i < count; i++) {
    const racer = await sdk.joinActive(space.owner, { name: `Racer ${i}` });
    participants.push({ participantId: idOf(racer), key: racer.key });
  }
  const res = await space.owner.artifacts.create({ name: 'Contested', content: 'start\n' }).withResponse();
  expectAnswer(res);
  return { space, artifactId: res.data.id, participants };
}

/** Each racer's client, on the nodes in turn. */
const clientsOf = (nodes: Sdk[], race: Race): SpaceClient[] =>
  race.participants.map((p, i) => nodes[i % nodes.length]!.space(race.space.spaceId, p.key, p.participantId));

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Everyone fires a lock request at the same moment, `rounds` times: exactly one wins each round,
 * every loser is told the winner; the winner writes and unlocks before the next round.
 */
async function simultaneousRounds(nodes: Sdk[], race: Race, rounds: number): Promise<number> {
  const clients = clientsOf(nodes, race);
  let writes = 0;
  for (let round = 0; round < rounds; round++) {
    const results = await Promise.allSettled(clients.map((c) => c.artifacts.lock(race.artifactId)));
    const winners = clients.filter((_, i) => results[i]!.status === 'fulfilled');
    expect(winners, `round ${round}`).toHaveLength(1);
    const winner = winners[0]!;
    for (const result of results) {
      if (result.status === 'fulfilled') expect(result.value.lockedBy).toBe(idOf(winner));
      else {
        expect(result.reason, (result.reason as Error).message).toBeInstanceOf(LockedError);
        expect((result.reason as LockedError).lockedBy).toBe(idOf(winner));
      }
    }
    expectAnswer(await winner.artifacts.write(race.artifactId, `round ${round}\n`).withResponse());
    writes++;
    expectAnswer(await winner.artifacts.unlock(race.artifactId).withResponse());
  }
  return writes;
}

/**
 * Each participant loops lock → write → unlock `cycles` times, retrying on 423. A shared flag
 * records who holds the lock according to the server's answers; it is cleared before the unlock
 * is sent, so a second holder can only show up if the server granted two locks at once.
 */
async function freeForAll(nodes: Sdk[], race: Race, cycles: number) {
  let holder: string | null = null;
  let overlaps = 0;
  let writes = 0;
  let refusals = 0;
  await Promise.all(
    clientsOf(nodes, race).map(async (client) => {
      const me = idOf(client);
      for (let done = 0; done < cycles; ) {
        try {
          await client.artifacts.lock(race.artifactId);
        } catch (error) {
          expect(error, (error as Error).message).toBeInstanceOf(LockedError);
          expect(typeof (error as LockedError).lockedBy).toBe('string');
          expect((error as LockedError).lockedBy).not.toBe(me);
          refusals++;
          await pause(2 + Math.random() * 8);
          continue;
        }
        if (holder !== null) overlaps++;
        holder = me;
        const write = await client.artifacts.write(race.artifactId, `${me} #${done}\n`);
        expect(write.updatedBy).toBe(me);
        writes++;
        if (holder !== me) overlaps++;
        holder = null;
        expectAnswer(await client.artifacts.unlock(race.artifactId).withResponse());
        done++;
      }
    }),
  );
  return { overlaps, writes, refusals };
}

/** How many creations succeeded and how many were refused as over the limit. */
function creations(results: PromiseSettledResult<unknown>[]) {
  const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as ConveneError] : []));
  for (const error of refused) expect(error, error.message).toBeInstanceOf(ConflictError);
  return { created: results.length - refused.length, refused: refused.length };
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
  const { srv, sdk } = useServer();

  it(
    'grants exactly one of many simultaneous lock requests, round after round',
    async () => {
      const race = await setUpRace(sdk, 8);
      const writes = await simultaneousRounds([sdk], race, 10);
      await verifyRecord(srv, race, writes);
    },
    RACE_TIMEOUT_MS,
  );

  it(
    'never has two holders while participants lock, write and unlock in a free-for-all',
    async () => {
      const race = await setUpRace(sdk, 6);
      const { overlaps, writes } = await freeForAll([sdk], race, 6);
      expect(overlaps).toBe(0);
      expect(writes).toBe(36);
      await verifyRecord(srv, race, writes);
    },
    RACE_TIMEOUT_MS,
  );

  it('stops concurrent creators at exactly 1,000 artifacts', async () => {
    const space = await sdk.createSpace();
    await fillArtifacts(srv, space, limits.artifactsPerSpace - 5);
    const results = await Promise.allSettled(
      Array.from({ length: 15 }, (_, i) => space.owner.artifacts.create({ name: `late ${i}` })),
    );
    expect(creations(results)).toEqual({ created: 5, refused: 10 });
    const list = await space.owner.artifacts.list();
    expect(list.artifacts).toHaveLength(limits.artifactsPerSpace);
  });
});

describe.runIf(onPostgres())('two nodes on one PostgreSQL', () => {
  const { srv: a, sdk: onA } = useServer();
  const { srv: b, sdk: onB } = useServer(() => ({ databaseUrl: a.databaseUrl! }));

  it(
    'grants exactly one of many simultaneous lock requests across nodes, round after round',
    async () => {
      const race = await setUpRace(onA, 10);
      const writes = await simultaneousRounds([onA, onB], race, 12);
      await verifyRecord(a, race, writes);
    },
    RACE_TIMEOUT_MS,
  );

  it(
    'never has two holders in a free-for-all across nodes, and counts every write',
    async () => {
      const race = await setUpRace(onB, 8);
      const { overlaps, writes } = await freeForAll([onA, onB], race, 6);
      expect(overlaps).toBe(0);
      expect(writes).toBe(48);
      await verifyRecord(b, race, writes);
    },
    RACE_TIMEOUT_MS,
  );

  it('stops concurrent creators on both nodes at exactly 1,000 artifacts', async () => {
    const space = await onA.createSpace();
    await fillArtifacts(a, space, limits.artifactsPerSpace - 6);
    const ownerOnB = onB.space(space.spaceId, space.ownerKey);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? space.owner : ownerOnB).artifacts.create({ name: `late ${i}` }),
      ),
    );
    expect(creations(results)).toEqual({ created: 6, refused: 14 });
    const list = await ownerOnB.artifacts.list();
    expect(list.artifacts).toHaveLength(limits.artifactsPerSpace);
  });
});

async function fillArtifacts(srv: TestServer, space: OwnedSpace, count: number) {
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
