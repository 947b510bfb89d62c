import { FakeClock, schema } from '@convene/core';
import { type ArtifactView, LockedError, type SpaceClient } from '@convene/sdk';
import { and, asc, eq, like } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { expectAnswer, idOf, type OwnedSpace, sdkError, useServer } from './helpers';
import { SseStream } from './helpers/sse';

// Lock lifetimes through an injected clock: expiry checked at use, takeover, heartbeat and write
// refreshes, and the releases that leave, kick and close perform; driven through the SDK, the
// expiry sweep watched on the raw stream. LOCK_TTL_S is 60 here.
const clock = new FakeClock('2031-06-01T12:00:00.000Z');
const TTL_S = 60;
const TTL_MS = TTL_S * 1000;

const { srv, sdk } = useServer({ clock, config: { lockTtlSeconds: TTL_S } });

const at = (offsetMs = 0) => new Date(clock.now().getTime() + offsetMs).toISOString();

interface Room {
  space: OwnedSpace;
  alice: SpaceClient;
  bob: SpaceClient;
  artifact: ArtifactView;
}

/** The names the room's participants joined with. */
const names = new WeakMap<SpaceClient, string>();

async function room(): Promise<Room> {
  const space = await sdk.createSpace();
  const alice = await sdk.joinActive(space.owner, { name: 'Alice' });
  const bob = await sdk.joinActive(space.owner, { name: 'Bob' });
  names.set(alice, 'Alice').set(bob, 'Bob');
  const res = await alice.artifacts.create({ name: 'Doc', content: 'v1' }).withResponse();
  expectAnswer(res);
  return { space, alice, bob, artifact: res.data };
}

const lockAs = (r: Room, who: SpaceClient) => who.artifacts.lock(r.artifact.id).withResponse();
const heartbeatAs = (r: Room, who: SpaceClient) => who.artifacts.heartbeat(r.artifact.id);
const writeAs = (r: Room, who: SpaceClient, content: string) => who.artifacts.write(r.artifact.id, content);
const view = (r: Room) => r.space.owner.artifacts.get(r.artifact.id);

async function expectLockedBy(call: PromiseLike<unknown>, holder: SpaceClient, expiresAt: string) {
  const error = await sdkError(call, LockedError);
  expect(error.body?.lockedBy).toBe(idOf(holder));
  // Their name too, for whoever has to say who holds it.
  expect(error.body?.lockedByName).toBe(names.get(holder));
  expect(error.lockedByName).toBe(names.get(holder));
  expect(error.body?.lockExpiresAt).toBe(expiresAt);
  // And in the words, which are what a log line or a model shows.
  expect(error.body?.error).toBe(
    `artifact is locked by another participant ("${names.get(holder)}") until ${expiresAt}`,
  );
}

async function expectLockedByNobody(call: PromiseLike<unknown>) {
  const error = await sdkError(call, LockedError);
  expect(error.body).not.toHaveProperty('lockedBy');
  expect(error.body).not.toHaveProperty('lockedByName');
  expect(error.body).not.toHaveProperty('lockExpiresAt');
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
    expectAnswer(lock);
    const expiresAt = at(TTL_MS);
    expect(lock.data).toEqual({ lockedBy: idOf(r.alice), lockExpiresAt: expiresAt });

    clock.advance(TTL_MS - 1);
    await expectLockedBy(lockAs(r, r.bob), r.alice, expiresAt);
    expect((await view(r)).lockedBy).toBe(idOf(r.alice));

    clock.advance(1);
    const taken = await lockAs(r, r.bob);
    expectAnswer(taken);
    expect(taken.data).toEqual({ lockedBy: idOf(r.bob), lockExpiresAt: at(TTL_MS) });

    await expectLockedBy(writeAs(r, r.alice, 'too late'), r.bob, at(TTL_MS));
    await expectLockedBy(heartbeatAs(r, r.alice), r.bob, at(TTL_MS));
    await expectLockedBy(r.alice.artifacts.unlock(r.artifact.id), r.bob, at(TTL_MS));
    expect(await view(r)).toMatchObject({
      content: 'v1',
      version: 1,
      lockedBy: idOf(r.bob),
      lockedAt: at(),
      lockExpiresAt: at(TTL_MS),
    });
    expectAnswer(await writeAs(r, r.bob, 'v2').withResponse());

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
    expect(events[3]?.data).toMatchObject({ lockedBy: idOf(r.bob) });
  });

  it('leaves nobody holding a lapsed lock: writes and heartbeats answer 423 without a holder', async () => {
    const r = await room();
    expectAnswer(await lockAs(r, r.alice));
    clock.advance(TTL_MS);
    const current = await view(r);
    expect(current).not.toHaveProperty('lockedBy');
    expect(current).not.toHaveProperty('lockExpiresAt');
    const space = await r.bob.get();
    expect(space.artifacts).toEqual([
      { id: r.artifact.id, name: 'Doc', version: 1, updatedAt: r.artifact.updatedAt },
    ]);

    await expectLockedByNobody(writeAs(r, r.alice, 'lapsed'));
    await expectLockedByNobody(heartbeatAs(r, r.alice));
    await expectLockedByNobody(writeAs(r, r.bob, 'never held'));
    expect((await view(r)).version).toBe(1);

    // The former holder may take it again, as a new lock.
    clock.advance(5000);
    const again = await lockAs(r, r.alice);
    expectAnswer(again);
    expect(again.data.lockExpiresAt).toBe(at(TTL_MS));
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
    expectAnswer(await lockAs(r, r.alice));
    clock.advance(TTL_MS + 1000);
    const res = await r.bob.artifacts.unlock(r.artifact.id).withResponse();
    expectAnswer(res);
    expect(res.data).not.toHaveProperty('lockedBy');
    expect(await lockColumns(r)).toEqual({ lockedBy: null, lockExpiresAt: null });
    expect((await artifactEvents(r.space.spaceId)).map((e) => e.kind)).toEqual([
      'artifact-created',
      'artifact-locked',
      'artifact-unlocked',
    ]);
  });

  it('extends the lifetime on heartbeat', async () => {
    const r = await room();
    expectAnswer(await lockAs(r, r.alice));
    const start = clock.now().getTime();
    clock.advance(50_000);
    const beat = await heartbeatAs(r, r.alice).withResponse();
    expectAnswer(beat);
    expect(beat.data.lockExpiresAt).toBe(new Date(start + 50_000 + TTL_MS).toISOString());
    clock.advance(TTL_MS - 1);
    await expectLockedBy(lockAs(r, r.bob), r.alice, beat.data.lockExpiresAt);
    clock.advance(1);
    expectAnswer(await lockAs(r, r.bob));
  });

  it('extends the lifetime on every write', async () => {
    const r = await room();
    expectAnswer(await lockAs(r, r.alice));
    for (let i = 2; i <= 4; i++) {
      clock.advance(TTL_MS - 1000);
      const res = await writeAs(r, r.alice, `v${i}`).withResponse();
      expectAnswer(res);
      expect(res.data).toMatchObject({ version: i, lockExpiresAt: at(TTL_MS) });
    }
    clock.advance(TTL_MS - 1);
    await expectLockedBy(lockAs(r, r.bob), r.alice, at(1));
  });

  it('lets a lock refresh by its holder extend it too', async () => {
    const r = await room();
    expectAnswer(await lockAs(r, r.alice));
    clock.advance(TTL_MS - 1);
    const again = await lockAs(r, r.alice);
    expectAnswer(again);
    expect(again.data.lockExpiresAt).toBe(at(TTL_MS));
    clock.advance(TTL_MS - 1);
    expectAnswer(await writeAs(r, r.alice, 'still mine').withResponse());
  });
});

describe('the expiry sweep', () => {
  it('announces a lapse to open streams within seconds, once, with nobody touching the artifact', async () => {
    const r = await room();
    const stream = await SseStream.connect(srv.listenUrl, r.space.spaceId, { key: r.bob.key });
    try {
      await stream.until((e) => e.event === 'context');
      expectAnswer(await lockAs(r, r.alice));
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
      await expectLockedByNobody(writeAs(r, r.alice, 'lapsed'));
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
    const space = await sdk.createSpace({ ttl: 30 });
    const alice = await sdk.joinActive(space.owner, { name: 'Alice' });
    const created = await alice.artifacts.create({ name: 'Doc', content: 'v1' });
    expectAnswer(await alice.artifacts.lock(created.id).withResponse());
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
    expectAnswer(await lockAs(r, r.bob));
    expectAnswer(await r.space.owner.participants.kick(idOf(r.bob)).withResponse());
    expect(await lockColumns(r)).toEqual({ lockedBy: null, lockExpiresAt: null });
    expect((await artifactEvents(r.space.spaceId)).map((e) => e.kind)).toEqual([
      'artifact-created',
      'artifact-locked',
      'artifact-unlocked',
    ]);
    expectAnswer(await lockAs(r, r.alice));
  });

  it('frees the locks of a participant who leaves, even while muted', async () => {
    const r = await room();
    expectAnswer(await lockAs(r, r.bob));
    expectAnswer(await r.space.owner.participants.mute(idOf(r.bob)).withResponse());
    expectAnswer(await r.bob.leave().withResponse());
    expect(await lockColumns(r)).toEqual({ lockedBy: null, lockExpiresAt: null });
    expectAnswer(await lockAs(r, r.alice));
  });

  it('frees every lock when the space closes', async () => {
    const r = await room();
    expectAnswer(await lockAs(r, r.alice));
    expectAnswer(await r.space.owner.close().withResponse());
    expect(await lockColumns(r)).toEqual({ lockedBy: null, lockExpiresAt: null });
    expect((await artifactEvents(r.space.spaceId)).map((e) => e.kind)).toEqual([
      'artifact-created',
      'artifact-locked',
      'artifact-unlocked',
    ]);
  });
});
