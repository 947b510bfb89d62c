import { FakeClock, schema } from '@convene/core';
import { and, asc, eq, like } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  type ApiResponse,
  expectError,
  expectOk,
  type ParticipantFixture,
  type SpaceFixture,
  useServer,
} from './helpers';
import { SseStream } from './helpers/sse';

// Lock lifetimes through an injected clock: expiry checked at use, takeover, heartbeat and write
// refreshes, and the releases that leave, kick and close perform. LOCK_TTL_S is 60 here.
const clock = new FakeClock('2031-06-01T12:00:00.000Z');
const TTL_S = 60;
const TTL_MS = TTL_S * 1000;

const { srv, h } = useServer({ clock, config: { lockTtlSeconds: TTL_S } });

const at = (offsetMs = 0) => new Date(clock.now().getTime() + offsetMs).toISOString();

interface Room {
  space: SpaceFixture;
  alice: ParticipantFixture;
  bob: ParticipantFixture;
  artifact: { id: string; updatedAt: string };
  path: string;
}

async function room(): Promise<Room> {
  const space = await h.createSpace();
  const alice = await h.joinActive(space, { name: 'Alice' });
  const bob = await h.joinActive(space, { name: 'Bob' });
  const res = await h.post(`/hub/space/${space.spaceId}/artifact`, {
    key: alice.key,
    body: { name: 'Doc', type: 'markdown', content: 'v1' },
  });
  expectOk(res);
  return {
    space,
    alice,
    bob,
    artifact: res.body,
    path: `/hub/space/${space.spaceId}/artifact/${res.body.id}`,
  };
}

const lockAs = (r: Room, who: ParticipantFixture) => h.post(`${r.path}/lock`, { key: who.key });
const heartbeatAs = (r: Room, who: ParticipantFixture) =>
  h.post(`${r.path}/lock/heartbeat`, { key: who.key });
const writeAs = (r: Room, who: ParticipantFixture, content: string) =>
  h.patch(r.path, { key: who.key, body: { content } });
const view = async (r: Room) => (await h.get(r.path, { key: r.space.ownerKey })).body;

function expectLockedBy(res: ApiResponse, holder: ParticipantFixture, expiresAt: string) {
  expectError(res, 423);
  expect(res.body.lockedBy).toBe(holder.participantId);
  expect(res.body.lockExpiresAt).toBe(expiresAt);
}

function expectLockedByNobody(res: ApiResponse) {
  expectError(res, 423);
  expect(res.body).not.toHaveProperty('lockedBy');
  expect(res.body).not.toHaveProperty('lockExpiresAt');
}

async function artifactEvents(spaceId: string) {
  const { spaceEvents } = schema;
  return srv.server.database.db
    .select({ kind: spaceEvents.kind, data: spaceEvents.data })
    .from(spaceEvents)
    .where(and(eq(spaceEvents.spaceId, spaceId), like(spaceEvents.kind, 'artifact-%')))
    .orderBy(asc(spaceEvents.seq));
}

async function lockColumns(r: Room) {
  const { artifacts } = schema;
  const [row] = await srv.server.database.db
    .select({ lockedBy: artifacts.lockedBy, lockExpiresAt: artifacts.lockExpiresAt })
    .from(artifacts)
    .where(and(eq(artifacts.spaceId, r.space.spaceId), eq(artifacts.id, r.artifact.id)));
  return row;
}

describe('lock expiry', () => {
  it('holds until exactly LOCK_TTL_S, then another participant takes it and the former holder gets 423', async () => {
    const r = await room();
    const lock = await lockAs(r, r.alice);
    expectOk(lock);
    const expiresAt = at(TTL_MS);
    expect(lock.body).toEqual({ lockedBy: r.alice.participantId, lockExpiresAt: expiresAt });

    clock.advance(TTL_MS - 1);
    expectLockedBy(await lockAs(r, r.bob), r.alice, expiresAt);
    expect((await view(r)).lockedBy).toBe(r.alice.participantId);

    clock.advance(1);
    const taken = await lockAs(r, r.bob);
    expectOk(taken);
    expect(taken.body).toEqual({ lockedBy: r.bob.participantId, lockExpiresAt: at(TTL_MS) });

    expectLockedBy(await writeAs(r, r.alice, 'too late'), r.bob, at(TTL_MS));
    expectLockedBy(await heartbeatAs(r, r.alice), r.bob, at(TTL_MS));
    expectLockedBy(await h.delete(`${r.path}/lock`, { key: r.alice.key }), r.bob, at(TTL_MS));
    expect(await view(r)).toMatchObject({
      content: 'v1',
      version: 1,
      lockedBy: r.bob.participantId,
      lockedAt: at(),
      lockExpiresAt: at(TTL_MS),
    });
    expectOk(await writeAs(r, r.bob, 'v2'));

    // The lapse is announced when it is observed, just before the new lock.
    const events = await artifactEvents(r.space.spaceId);
    expect(events.map((e) => e.kind)).toEqual([
      'artifact-created',
      'artifact-locked',
      'artifact-unlocked',
      'artifact-locked',
      'artifact-updated',
    ]);
    expect(events[2]?.data).toEqual({
      id: r.artifact.id,
      name: 'Doc',
      version: 1,
      updatedAt: r.artifact.updatedAt,
    });
    expect(events[3]?.data).toMatchObject({ lockedBy: r.bob.participantId });
  });

  it('leaves nobody holding a lapsed lock: writes and heartbeats answer 423 without a holder', async () => {
    const r = await room();
    expectOk(await lockAs(r, r.alice));
    clock.advance(TTL_MS);
    const current = await view(r);
    expect(current).not.toHaveProperty('lockedBy');
    expect(current).not.toHaveProperty('lockExpiresAt');
    const space = await h.get(`/hub/space/${r.space.spaceId}`, { key: r.bob.key });
    expect(space.body.artifacts).toEqual([
      { id: r.artifact.id, name: 'Doc', version: 1, updatedAt: r.artifact.updatedAt },
    ]);

    expectLockedByNobody(await writeAs(r, r.alice, 'lapsed'));
    expectLockedByNobody(await heartbeatAs(r, r.alice));
    expectLockedByNobody(await writeAs(r, r.bob, 'never held'));
    expect((await view(r)).version).toBe(1);

    // The former holder may take it again, as a new lock.
    clock.advance(5000);
    const again = await lockAs(r, r.alice);
    expectOk(again);
    expect(again.body.lockExpiresAt).toBe(at(TTL_MS));
    expect((await view(r)).lockedAt).toBe(at());
    expect((await artifactEvents(r.space.spaceId)).map((e) => e.kind)).toEqual([
      'artifact-created',
      'artifact-locked',
      'artifact-unlocked',
      'artifact-locked',
    ]);
  });

  it('announces a lapsed lock when someone unlocks it, and answers 200', async () => {
    const r = await room();
    expectOk(await lockAs(r, r.alice));
    clock.advance(TTL_MS + 1000);
    const res = await h.delete(`${r.path}/lock`, { key: r.bob.key });
    expectOk(res);
    expect(res.body).not.toHaveProperty('lockedBy');
    expect(await lockColumns(r)).toEqual({ lockedBy: null, lockExpiresAt: null });
    expect((await artifactEvents(r.space.spaceId)).map((e) => e.kind)).toEqual([
      'artifact-created',
      'artifact-locked',
      'artifact-unlocked',
    ]);
  });

  it('extends the lifetime on heartbeat', async () => {
    const r = await room();
    expectOk(await lockAs(r, r.alice));
    const start = clock.now().getTime();
    clock.advance(50_000);
    const beat = await heartbeatAs(r, r.alice);
    expectOk(beat);
    expect(beat.body.lockExpiresAt).toBe(new Date(start + 50_000 + TTL_MS).toISOString());
    clock.advance(TTL_MS - 1);
    expectLockedBy(await lockAs(r, r.bob), r.alice, beat.body.lockExpiresAt);
    clock.advance(1);
    expectOk(await lockAs(r, r.bob));
  });

  it('extends the lifetime on every write', async () => {
    const r = await room();
    expectOk(await lockAs(r, r.alice));
    for (let i = 2; i <= 4; i++) {
      clock.advance(TTL_MS - 1000);
      const res = await writeAs(r, r.alice, `v${i}`);
      expectOk(res);
      expect(res.body).toMatchObject({ version: i, lockExpiresAt: at(TTL_MS) });
    }
    clock.advance(TTL_MS - 1);
    expectLockedBy(await lockAs(r, r.bob), r.alice, at(1));
  });

  it('lets a lock refresh by its holder extend it too', async () => {
    const r = await room();
    expectOk(await lockAs(r, r.alice));
    clock.advance(TTL_MS - 1);
    const again = await lockAs(r, r.alice);
    expectOk(again);
    expect(again.body.lockExpiresAt).toBe(at(TTL_MS));
    clock.advance(TTL_MS - 1);
    expectOk(await writeAs(r, r.alice, 'still mine'));
  });
});

describe('the expiry sweep', () => {
  it('announces a lapse to open streams within seconds, once, with nobody touching the artifact', async () => {
    const r = await room();
    const stream = await SseStream.connect(srv.listenUrl, r.space.spaceId, { key: r.bob.key });
    try {
      await stream.until((e) => e.event === 'context');
      expectOk(await lockAs(r, r.alice));
      await stream.until((e) => e.event === 'artifact-locked');
      clock.advance(TTL_MS);
      const started = Date.now();
      const seen = await stream.until((e) => e.event === 'artifact-unlocked', 5000);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(seen.at(-1)!.json).toEqual({
        id: r.artifact.id,
        name: 'Doc',
        version: 1,
        updatedAt: r.artifact.updatedAt,
      });
      // A fresh context follows; the lock columns are cleared; the event is recorded once, so a
      // stream resuming with Last-Event-ID replays it.
      await stream.until((e) => e.event === 'context' && e.json.artifacts[0].lockedBy === undefined);
      expect(await lockColumns(r)).toEqual({ lockedBy: null, lockExpiresAt: null });
      const resumed = await SseStream.connect(srv.listenUrl, r.space.spaceId, {
        key: r.bob.key,
        lastEventId: String(Number(seen.at(-1)!.id) - 1),
      });
      try {
        expect((await resumed.next()).event).toBe('artifact-unlocked');
      } finally {
        resumed.close();
      }
      // Sweeps keep running: still exactly one unlocked event, and the former holder gets 423.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(stream.remaining.filter((e) => e.event === 'artifact-unlocked')).toEqual([]);
      expectLockedByNobody(await writeAs(r, r.alice, 'lapsed'));
      expect((await artifactEvents(r.space.spaceId)).map((e) => e.kind)).toEqual([
        'artifact-created',
        'artifact-locked',
        'artifact-unlocked',
      ]);
    } finally {
      stream.close();
    }
  });

  it('leaves the locks of a space past its TTL alone: nothing follows its end', async () => {
    const space = await h.createSpace({ ttl: 30 });
    const alice = await h.joinActive(space, { name: 'Alice' });
    const created = await h.post(`/hub/space/${space.spaceId}/artifact`, {
      key: alice.key,
      body: { name: 'Doc', type: 'markdown', content: 'v1' },
    });
    expectOk(created);
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/artifact/${created.body.id}/lock`, { key: alice.key }),
    );
    clock.advance(TTL_MS);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await artifactEvents(space.spaceId)).map((e) => e.kind)).toEqual([
      'artifact-created',
      'artifact-locked',
    ]);
  });
});

describe('releases', () => {
  it('frees the locks of a kicked participant and announces it', async () => {
    const r = await room();
    expectOk(await lockAs(r, r.bob));
    expectOk(
      await h.post(`/hub/space/${r.space.spaceId}/participants/${r.bob.participantId}/kick`, {
        key: r.space.ownerKey,
      }),
    );
    expect(await lockColumns(r)).toEqual({ lockedBy: null, lockExpiresAt: null });
    expect((await artifactEvents(r.space.spaceId)).map((e) => e.kind)).toEqual([
      'artifact-created',
      'artifact-locked',
      'artifact-unlocked',
    ]);
    expectOk(await lockAs(r, r.alice));
  });

  it('frees the locks of a participant who leaves, even while muted', async () => {
    const r = await room();
    expectOk(await lockAs(r, r.bob));
    expectOk(
      await h.post(`/hub/space/${r.space.spaceId}/participants/${r.bob.participantId}/mute`, {
        key: r.space.ownerKey,
      }),
    );
    expectOk(await h.post(`/hub/space/${r.space.spaceId}/leave`, { key: r.bob.key }));
    expect(await lockColumns(r)).toEqual({ lockedBy: null, lockExpiresAt: null });
    expectOk(await lockAs(r, r.alice));
  });

  it('frees every lock when the space closes', async () => {
    const r = await room();
    expectOk(await lockAs(r, r.alice));
    expectOk(await h.delete(`/hub/space/${r.space.spaceId}`, { key: r.space.ownerKey }));
    expect(await lockColumns(r)).toEqual({ lockedBy: null, lockExpiresAt: null });
    expect((await artifactEvents(r.space.spaceId)).map((e) => e.kind)).toEqual([
      'artifact-created',
      'artifact-locked',
      'artifact-unlocked',
    ]);
  });
});
