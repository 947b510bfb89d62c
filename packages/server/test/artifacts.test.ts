import { limits } from '@convene/contract';
import { FakeClock, newId, schema } from '@convene/core';
import { and, asc, eq, like } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  type ApiResponse,
  expectError,
  expectKeyChecks,
  expectOk,
  type ParticipantFixture,
  type SpaceFixture,
  useServer,
} from './helpers';

// Per-operation tests of the artifact routes: happy path, errors, and the key checks.
const clock = new FakeClock('2030-01-01T00:00:00.000Z');
const TTL_MS = 600_000;

const { srv, h } = useServer({ clock });

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const at = (offsetMs = 0) => new Date(clock.now().getTime() + offsetMs).toISOString();

interface Room {
  space: SpaceFixture;
  owner: ParticipantFixture;
  alice: ParticipantFixture;
  bob: ParticipantFixture;
}

async function room(): Promise<Room> {
  const space = await h.createSpace();
  return {
    space,
    owner: { participantId: space.ownerId, key: space.ownerKey },
    alice: await h.joinActive(space, { name: 'Alice' }),
    bob: await h.joinActive(space, { name: 'Bob' }),
  };
}

const artifactsPath = (space: SpaceFixture) => `/hub/space/${space.spaceId}/artifact`;
const artifactPath = (space: SpaceFixture, id: string) => `${artifactsPath(space)}/${id}`;

async function create(space: SpaceFixture, key: string, body: Record<string, unknown> = {}) {
  const res = await h.post(artifactsPath(space), {
    key,
    body: { name: 'Plan', type: 'markdown', content: '# Plan\n', ...body },
  });
  expectOk(res);
  return res.body;
}

async function lock(space: SpaceFixture, id: string, key: string) {
  const res = await h.post(`${artifactPath(space, id)}/lock`, { key });
  expectOk(res);
  return res.body;
}

const read = async (space: SpaceFixture, id: string) => {
  const res = await h.get(artifactPath(space, id), { key: space.ownerKey });
  expectOk(res);
  return res.body;
};

const moderate = async (space: SpaceFixture, who: ParticipantFixture, action: string) =>
  expectOk(
    await h.post(`/hub/space/${space.spaceId}/participants/${who.participantId}/${action}`, {
      key: space.ownerKey,
    }),
  );

/** Keys that must answer 401 on every artifact route of `space`. */
async function strangerKeys(space: SpaceFixture): Promise<Record<string, string>> {
  const other = await h.createSpace();
  const { kicked, left } = await h.deadKeys(space);
  return {
    invitation: await h.invite(space),
    'other space owner': other.ownerKey,
    'other space participant': (await h.joinActive(other)).key,
    kicked,
    left,
  };
}

/** The artifact events a space recorded for its stream, oldest first. */
async function artifactEvents(spaceId: string) {
  const { spaceEvents } = schema;
  return srv.server.database.db
    .select({ kind: spaceEvents.kind, data: spaceEvents.data })
    .from(spaceEvents)
    .where(and(eq(spaceEvents.spaceId, spaceId), like(spaceEvents.kind, 'artifact-%')))
    .orderBy(asc(spaceEvents.seq));
}

function expectLocked(res: ApiResponse, holder: string, expiresAt: string) {
  expectError(res, 423);
  expect(res.body.lockedBy).toBe(holder);
  expect(res.body.lockExpiresAt).toBe(expiresAt);
}

function expectLockedByNobody(res: ApiResponse) {
  expectError(res, 423);
  expect(res.body).not.toHaveProperty('lockedBy');
  expect(res.body).not.toHaveProperty('lockExpiresAt');
}

function expectNoLockFields(view: Record<string, unknown>) {
  expect(view).not.toHaveProperty('lockedBy');
  expect(view).not.toHaveProperty('lockedAt');
  expect(view).not.toHaveProperty('lockExpiresAt');
}

describe('createArtifact', () => {
  it('creates version 1, unlocked, for the owner and for a participant, and announces it', async () => {
    const { space, alice } = await room();
    const res = await h.post(artifactsPath(space), {
      key: alice.key,
      body: { name: 'Design notes', type: 'markdown', content: '# Notes\n\n- one\n' },
    });
    expectOk(res);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      spaceId: space.spaceId,
      name: 'Design notes',
      type: 'markdown',
      content: '# Notes\n\n- one\n',
      version: 1,
      createdBy: alice.participantId,
      updatedBy: alice.participantId,
      createdAt: at(),
      updatedAt: at(),
    });
    const byOwner = await create(space, space.ownerKey, { name: 'Agenda' });
    expect(byOwner.createdBy).toBe(space.ownerId);

    expect(await artifactEvents(space.spaceId)).toEqual([
      {
        kind: 'artifact-created',
        data: { id: res.body.id, name: 'Design notes', version: 1, updatedAt: at() },
      },
      { kind: 'artifact-created', data: { id: byOwner.id, name: 'Agenda', version: 1, updatedAt: at() } },
    ]);
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: alice.key });
    expect(view.body.artifacts.map((a: { id: string }) => a.id)).toEqual([res.body.id, byOwner.id]);
    const versions = await h.get(`${artifactPath(space, res.body.id)}/versions`, { key: alice.key });
    expect(versions.body.versions).toEqual([
      { version: 1, updatedBy: alice.participantId, updatedAt: at(), size: 15 },
    ]);
  });

  it('defaults content to empty and accepts 200-character names and exactly 1 MiB of UTF-8', async () => {
    const { space, alice } = await room();
    const empty = await create(space, alice.key, { content: undefined });
    expect(empty.content).toBe('');
    expect((await create(space, alice.key, { name: 'n'.repeat(200) })).name).toHaveLength(200);
    const ascii = 'a'.repeat(limits.artifactContentMax);
    expect((await create(space, alice.key, { content: ascii })).content).toBe(ascii);
    // 2-byte characters: half as many fit in the same 1 MiB.
    const accents = 'é'.repeat(limits.artifactContentMax / 2);
    expect((await create(space, alice.key, { content: accents })).content).toBe(accents);
  });

  it.each([
    ['no name', { type: 'markdown', content: 'x' }],
    ['empty name', { name: '', type: 'markdown' }],
    ['201-character name', { name: 'n'.repeat(201), type: 'markdown' }],
    ['no type', { name: 'a' }],
    ['another type', { name: 'a', type: 'text' }],
    ['content not a string', { name: 'a', type: 'markdown', content: 42 }],
    ['1 MiB + 1 byte of ASCII', { name: 'a', type: 'markdown', content: 'a'.repeat(1024 * 1024 + 1) }],
    ['1 MiB + 2 bytes of 2-byte characters', { name: 'a', type: 'markdown', content: 'é'.repeat(524_289) }],
    ['1 MiB + 4 bytes of emoji', { name: 'a', type: 'markdown', content: '😀'.repeat(262_145) }],
  ])('refuses %s with 400 and creates nothing', async (_label, body) => {
    const { space, alice } = await room();
    expectError(await h.post(artifactsPath(space), { key: alice.key, body }), 400);
    const list = await h.get(artifactsPath(space), { key: alice.key });
    expect(list.body.artifacts).toEqual([]);
  });

  it('refuses a muted participant with 403', async () => {
    const { space, alice } = await room();
    await moderate(space, alice, 'mute');
    expectError(
      await h.post(artifactsPath(space), { key: alice.key, body: { name: 'x', type: 'markdown' } }),
      403,
    );
    await moderate(space, alice, 'unmute');
    await create(space, alice.key);
  });

  it('answers 409 once the space holds 1,000 artifacts', async () => {
    const { space, alice } = await room();
    const now = clock.now();
    await srv.server.database.db.insert(schema.artifacts).values(
      Array.from({ length: limits.artifactsPerSpace - 1 }, (_, i) => ({
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
    await create(space, alice.key, { name: 'the thousandth' });
    const res = await h.post(artifactsPath(space), {
      key: alice.key,
      body: { name: 'one too many', type: 'markdown' },
    });
    expectError(res, 409);
    const list = await h.get(artifactsPath(space), { key: alice.key });
    expect(list.body.artifacts).toHaveLength(limits.artifactsPerSpace);
  });

  it('answers 409 on a closed or expired space, 404 for an unknown one', async () => {
    const closed = await h.createSpace();
    expectOk(await h.delete(`/hub/space/${closed.spaceId}`, { key: closed.ownerKey }));
    const body = { name: 'late', type: 'markdown' };
    const res = await h.post(artifactsPath(closed), { key: closed.ownerKey, body });
    expectError(res, 409);
    expect(res.body.error).toBe('space is closed');

    const expiring = await h.createSpace({ ttl: 60 });
    const participant = await h.joinActive(expiring);
    clock.advance(60_000);
    expectError(await h.post(artifactsPath(expiring), { key: participant.key, body }), 409);

    expectError(await h.post(`/hub/space/${UNKNOWN_ID}/artifact`, { key: closed.ownerKey, body }), 404);
    expectError(await h.post('/hub/space/not-a-uuid/artifact', { key: closed.ownerKey, body }), 404);
  });

  it('refuses missing, unknown and wrong keys with 401', async () => {
    const { space } = await room();
    await expectKeyChecks(h, {
      method: 'POST',
      path: artifactsPath(space),
      body: { name: 'x', type: 'markdown' },
      wrongKeys: await strangerKeys(space),
    });
  });
});

describe('listArtifacts', () => {
  it('lists every artifact oldest first with content, lock fields only on locked ones; muted included', async () => {
    const { space, alice, bob } = await room();
    const first = await create(space, alice.key, { name: 'first', content: 'one' });
    clock.advance(1);
    const second = await create(space, bob.key, { name: 'second', content: 'two' });
    const held = await lock(space, second.id, bob.key);
    await moderate(space, alice, 'mute');
    const res = await h.get(artifactsPath(space), { key: alice.key });
    expectOk(res);
    expect(res.body.artifacts).toEqual([
      first,
      {
        ...second,
        lockedBy: bob.participantId,
        lockedAt: at(),
        lockExpiresAt: held.lockExpiresAt,
      },
    ]);
    expectNoLockFields(res.body.artifacts[0]);
    expectOk(await h.get(artifactsPath(space), { key: space.ownerKey }));
  });

  it('answers an empty list for a space without artifacts, 404 for an unknown space', async () => {
    const { space, bob } = await room();
    const res = await h.get(artifactsPath(space), { key: bob.key });
    expectOk(res);
    expect(res.body).toEqual({ artifacts: [] });
    expectError(await h.get(`/hub/space/${UNKNOWN_ID}/artifact`, { key: bob.key }), 404);
  });

  it('answers 401 on a closed space and for missing, unknown and wrong keys', async () => {
    const { space, alice } = await room();
    await expectKeyChecks(h, {
      method: 'GET',
      path: artifactsPath(space),
      wrongKeys: await strangerKeys(space),
    });
    expectOk(await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
    expectError(await h.get(artifactsPath(space), { key: alice.key }), 401);
    expectError(await h.get(artifactsPath(space), { key: space.ownerKey }), 401);
  });
});

describe('getArtifact', () => {
  it('answers the full artifact to any participant, muted included', async () => {
    const { space, alice, bob } = await room();
    const artifact = await create(space, alice.key, { content: 'line 1\r\nline 2 😀\n' });
    await moderate(space, bob, 'mute');
    const res = await h.get(artifactPath(space, artifact.id), { key: bob.key });
    expectOk(res);
    expect(res.body).toEqual(artifact);
  });

  it('answers 404 for an unknown, malformed or other-space artifact id', async () => {
    const { space, alice } = await room();
    const other = await h.createSpace();
    const elsewhere = await create(other, other.ownerKey);
    expectError(await h.get(artifactPath(space, UNKNOWN_ID), { key: alice.key }), 404);
    expectError(await h.get(artifactPath(space, 'nope'), { key: alice.key }), 404);
    expectError(await h.get(artifactPath(space, elsewhere.id), { key: alice.key }), 404);
  });

  it('refuses missing, unknown and wrong keys with 401', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    await expectKeyChecks(h, {
      method: 'GET',
      path: artifactPath(space, artifact.id),
      wrongKeys: await strangerKeys(space),
    });
  });
});

describe('lockArtifact', () => {
  it('gives the caller the lock for 10 minutes and shows it on the artifact', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    const res = await h.post(`${artifactPath(space, artifact.id)}/lock`, { key: alice.key });
    expectOk(res);
    expect(res.body).toEqual({ lockedBy: alice.participantId, lockExpiresAt: at(TTL_MS) });
    expect(await read(space, artifact.id)).toEqual({
      ...artifact,
      lockedBy: alice.participantId,
      lockedAt: at(),
      lockExpiresAt: at(TTL_MS),
    });
    const events = await artifactEvents(space.spaceId);
    expect(events.at(-1)).toEqual({
      kind: 'artifact-locked',
      data: {
        id: artifact.id,
        name: 'Plan',
        version: 1,
        updatedAt: artifact.updatedAt,
        lockedBy: alice.participantId,
        lockExpiresAt: at(TTL_MS),
      },
    });
  });

  it('lets the owner lock too', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    expect(await lock(space, artifact.id, space.ownerKey)).toEqual({
      lockedBy: space.ownerId,
      lockExpiresAt: at(TTL_MS),
    });
  });

  it('refreshes a lock the caller already holds, keeping lockedAt, announcing nothing', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    await lock(space, artifact.id, alice.key);
    const lockedAt = at();
    const eventsBefore = await artifactEvents(space.spaceId);
    clock.advance(120_000);
    expect(await lock(space, artifact.id, alice.key)).toEqual({
      lockedBy: alice.participantId,
      lockExpiresAt: at(TTL_MS),
    });
    const view = await read(space, artifact.id);
    expect(view.lockedAt).toBe(lockedAt);
    expect(view.lockExpiresAt).toBe(at(TTL_MS));
    expect(await artifactEvents(space.spaceId)).toEqual(eventsBefore);
  });

  it('answers 423 with the holder and expiry when someone else holds it, even to the owner', async () => {
    const { space, alice, bob } = await room();
    const artifact = await create(space, alice.key);
    const held = await lock(space, artifact.id, alice.key);
    expectLocked(
      await h.post(`${artifactPath(space, artifact.id)}/lock`, { key: bob.key }),
      alice.participantId,
      held.lockExpiresAt,
    );
    expectLocked(
      await h.post(`${artifactPath(space, artifact.id)}/lock`, { key: space.ownerKey }),
      alice.participantId,
      held.lockExpiresAt,
    );
    expect((await read(space, artifact.id)).lockedBy).toBe(alice.participantId);
  });

  it('refuses a muted participant with 403, even on a lock they hold', async () => {
    const { space, alice, bob } = await room();
    const artifact = await create(space, alice.key);
    const other = await create(space, alice.key, { name: 'other' });
    await lock(space, artifact.id, bob.key);
    await moderate(space, bob, 'mute');
    expectError(await h.post(`${artifactPath(space, other.id)}/lock`, { key: bob.key }), 403);
    expectError(await h.post(`${artifactPath(space, artifact.id)}/lock`, { key: bob.key }), 403);
    expectNoLockFields(await read(space, other.id));
  });

  it('answers 404 for an unknown or malformed artifact, 401 on a closed space', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    expectError(await h.post(`${artifactPath(space, UNKNOWN_ID)}/lock`, { key: alice.key }), 404);
    expectError(await h.post(`${artifactPath(space, 'x')}/lock`, { key: alice.key }), 404);
    expectOk(await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
    expectError(await h.post(`${artifactPath(space, artifact.id)}/lock`, { key: alice.key }), 401);
  });

  it('refuses missing, unknown and wrong keys with 401', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    await expectKeyChecks(h, {
      method: 'POST',
      path: `${artifactPath(space, artifact.id)}/lock`,
      wrongKeys: await strangerKeys(space),
    });
    expectNoLockFields(await read(space, artifact.id));
  });
});

describe('writeArtifact', () => {
  it('overwrites the content, bumps the version, refreshes the lock and announces it', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    await lock(space, artifact.id, alice.key);
    const lockedAt = at();
    clock.advance(30_000);
    const res = await h.patch(artifactPath(space, artifact.id), {
      key: alice.key,
      body: { content: '# Plan\n\nv2\n' },
    });
    expectOk(res);
    expect(res.body).toEqual({
      ...artifact,
      content: '# Plan\n\nv2\n',
      version: 2,
      updatedBy: alice.participantId,
      updatedAt: at(),
      lockedBy: alice.participantId,
      lockedAt,
      lockExpiresAt: at(TTL_MS),
    });
    expect(await read(space, artifact.id)).toEqual(res.body);
    expect((await artifactEvents(space.spaceId)).at(-1)).toEqual({
      kind: 'artifact-updated',
      data: {
        id: artifact.id,
        name: 'Plan',
        version: 2,
        updatedAt: at(),
        lockedBy: alice.participantId,
        lockExpiresAt: at(TTL_MS),
      },
    });
  });

  it('lets the owner write under its own lock, and accepts empty content', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    await lock(space, artifact.id, space.ownerKey);
    const res = await h.patch(artifactPath(space, artifact.id), {
      key: space.ownerKey,
      body: { content: '' },
    });
    expectOk(res);
    expect(res.body).toMatchObject({ content: '', version: 2, updatedBy: space.ownerId });
  });

  it('answers 423 naming the holder to anyone else, the owner included; nothing changes', async () => {
    const { space, alice, bob } = await room();
    const artifact = await create(space, alice.key);
    const held = await lock(space, artifact.id, alice.key);
    for (const key of [bob.key, space.ownerKey]) {
      expectLocked(
        await h.patch(artifactPath(space, artifact.id), { key, body: { content: 'intruder' } }),
        alice.participantId,
        held.lockExpiresAt,
      );
    }
    expect(await read(space, artifact.id)).toMatchObject({ content: artifact.content, version: 1 });
  });

  it('answers 423 without a holder when nobody holds the lock', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    expectLockedByNobody(
      await h.patch(artifactPath(space, artifact.id), { key: alice.key, body: { content: 'x' } }),
    );
    expect((await read(space, artifact.id)).version).toBe(1);
  });

  it('applies baseVersion: the current one writes, a stale one is 409 with the current version', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    await lock(space, artifact.id, alice.key);
    const path = artifactPath(space, artifact.id);
    expectOk(await h.patch(path, { key: alice.key, body: { content: 'v2', baseVersion: 1 } }));
    const stale = await h.patch(path, { key: alice.key, body: { content: 'stale', baseVersion: 1 } });
    expectError(stale, 409);
    expect(stale.body.version).toBe(2);
    const ahead = await h.patch(path, { key: alice.key, body: { content: 'ahead', baseVersion: 7 } });
    expectError(ahead, 409);
    expect(ahead.body.version).toBe(2);
    expect(await read(space, artifact.id)).toMatchObject({ content: 'v2', version: 2 });
    const versions = await h.get(`${path}/versions`, { key: alice.key });
    expect(versions.body.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
  });

  it('lets a muted holder keep writing', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    await lock(space, artifact.id, alice.key);
    await moderate(space, alice, 'mute');
    const res = await h.patch(artifactPath(space, artifact.id), {
      key: alice.key,
      body: { content: 'muted' },
    });
    expectOk(res);
    expect(res.body.version).toBe(2);
  });

  it.each([
    ['no content', {}],
    ['content not a string', { content: ['x'] }],
    ['content over 1 MiB', { content: '😀'.repeat(262_145) }],
    ['baseVersion not an integer', { content: 'x', baseVersion: 1.5 }],
    ['baseVersion zero', { content: 'x', baseVersion: 0 }],
  ])('refuses %s with 400; nothing changes', async (_label, body) => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    const held = await lock(space, artifact.id, alice.key);
    expectError(await h.patch(artifactPath(space, artifact.id), { key: alice.key, body }), 400);
    expect(await read(space, artifact.id)).toMatchObject({
      content: artifact.content,
      version: 1,
      lockExpiresAt: held.lockExpiresAt,
    });
  });

  it('answers 404 for unknown artifacts and 401 on a closed space', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    await lock(space, artifact.id, alice.key);
    expectError(
      await h.patch(artifactPath(space, UNKNOWN_ID), { key: alice.key, body: { content: 'x' } }),
      404,
    );
    expectError(await h.patch(artifactPath(space, '42'), { key: alice.key, body: { content: 'x' } }), 404);
    expectOk(await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
    expectError(
      await h.patch(artifactPath(space, artifact.id), { key: alice.key, body: { content: 'x' } }),
      401,
    );
  });

  it('refuses missing, unknown and wrong keys with 401', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    await lock(space, artifact.id, alice.key);
    await expectKeyChecks(h, {
      method: 'PATCH',
      path: artifactPath(space, artifact.id),
      body: { content: 'x' },
      wrongKeys: await strangerKeys(space),
    });
    expect((await read(space, artifact.id)).version).toBe(1);
  });
});

describe('heartbeatArtifactLock', () => {
  it('extends the holder’s lock without writing', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    await lock(space, artifact.id, alice.key);
    const eventsBefore = await artifactEvents(space.spaceId);
    clock.advance(400_000);
    const res = await h.post(`${artifactPath(space, artifact.id)}/lock/heartbeat`, { key: alice.key });
    expectOk(res);
    expect(res.body).toEqual({ lockedBy: alice.participantId, lockExpiresAt: at(TTL_MS) });
    expect(await read(space, artifact.id)).toMatchObject({ version: 1, lockExpiresAt: at(TTL_MS) });
    expect(await artifactEvents(space.spaceId)).toEqual(eventsBefore);
  });

  it('answers 423 naming the holder to others, and without a holder when nobody holds it', async () => {
    const { space, alice, bob } = await room();
    const artifact = await create(space, alice.key);
    const path = `${artifactPath(space, artifact.id)}/lock/heartbeat`;
    expectLockedByNobody(await h.post(path, { key: alice.key }));
    const held = await lock(space, artifact.id, alice.key);
    expectLocked(await h.post(path, { key: bob.key }), alice.participantId, held.lockExpiresAt);
    expectLocked(await h.post(path, { key: space.ownerKey }), alice.participantId, held.lockExpiresAt);
    expect((await read(space, artifact.id)).lockExpiresAt).toBe(held.lockExpiresAt);
  });

  it('lets a muted holder heartbeat', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    await lock(space, artifact.id, alice.key);
    await moderate(space, alice, 'mute');
    clock.advance(1000);
    const res = await h.post(`${artifactPath(space, artifact.id)}/lock/heartbeat`, { key: alice.key });
    expectOk(res);
    expect(res.body.lockExpiresAt).toBe(at(TTL_MS));
  });

  it('answers 404 for unknown artifacts and 401 on a closed space', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    await lock(space, artifact.id, alice.key);
    expectError(await h.post(`${artifactPath(space, UNKNOWN_ID)}/lock/heartbeat`, { key: alice.key }), 404);
    expectError(await h.post(`${artifactPath(space, 'zzz')}/lock/heartbeat`, { key: alice.key }), 404);
    expectOk(await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
    expectError(await h.post(`${artifactPath(space, artifact.id)}/lock/heartbeat`, { key: alice.key }), 401);
  });

  it('refuses missing, unknown and wrong keys with 401', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    await lock(space, artifact.id, alice.key);
    await expectKeyChecks(h, {
      method: 'POST',
      path: `${artifactPath(space, artifact.id)}/lock/heartbeat`,
      wrongKeys: await strangerKeys(space),
    });
  });
});

describe('unlockArtifact', () => {
  it('releases the holder’s lock and answers the artifact without lock fields', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    await lock(space, artifact.id, alice.key);
    const res = await h.delete(`${artifactPath(space, artifact.id)}/lock`, { key: alice.key });
    expectOk(res);
    expect(res.body).toEqual(artifact);
    expectNoLockFields(res.body);
    expect((await artifactEvents(space.spaceId)).map((e) => e.kind)).toEqual([
      'artifact-created',
      'artifact-locked',
      'artifact-unlocked',
    ]);
    expect((await artifactEvents(space.spaceId)).at(-1)?.data).toEqual({
      id: artifact.id,
      name: 'Plan',
      version: 1,
      updatedAt: artifact.updatedAt,
    });
  });

  it('lets the owner force-unlock someone else’s lock, after which others may lock', async () => {
    const { space, alice, bob } = await room();
    const artifact = await create(space, alice.key);
    await lock(space, artifact.id, alice.key);
    const res = await h.delete(`${artifactPath(space, artifact.id)}/lock`, { key: space.ownerKey });
    expectOk(res);
    expectNoLockFields(res.body);
    const bobs = await lock(space, artifact.id, bob.key);
    expectLocked(
      await h.patch(artifactPath(space, artifact.id), { key: alice.key, body: { content: 'late' } }),
      bob.participantId,
      bobs.lockExpiresAt,
    );
    expect((await artifactEvents(space.spaceId)).map((e) => e.kind)).toEqual([
      'artifact-created',
      'artifact-locked',
      'artifact-unlocked',
      'artifact-locked',
    ]);
  });

  it('answers 423 naming the holder to another participant; the lock stays', async () => {
    const { space, alice, bob } = await room();
    const artifact = await create(space, alice.key);
    const held = await lock(space, artifact.id, alice.key);
    expectLocked(
      await h.delete(`${artifactPath(space, artifact.id)}/lock`, { key: bob.key }),
      alice.participantId,
      held.lockExpiresAt,
    );
    expect((await read(space, artifact.id)).lockedBy).toBe(alice.participantId);
  });

  it('answers 200 with the artifact when nobody holds the lock, announcing nothing', async () => {
    const { space, alice, bob } = await room();
    const artifact = await create(space, alice.key);
    const res = await h.delete(`${artifactPath(space, artifact.id)}/lock`, { key: bob.key });
    expectOk(res);
    expect(res.body).toEqual(artifact);
    expect((await artifactEvents(space.spaceId)).map((e) => e.kind)).toEqual(['artifact-created']);
  });

  it('lets a muted holder unlock', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    await lock(space, artifact.id, alice.key);
    await moderate(space, alice, 'mute');
    expectOk(await h.delete(`${artifactPath(space, artifact.id)}/lock`, { key: alice.key }));
    expectNoLockFields(await read(space, artifact.id));
  });

  it('answers 404 for unknown artifacts and 401 on a closed space', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    expectError(await h.delete(`${artifactPath(space, UNKNOWN_ID)}/lock`, { key: alice.key }), 404);
    expectError(await h.delete(`${artifactPath(space, 'bad')}/lock`, { key: alice.key }), 404);
    expectOk(await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
    expectError(await h.delete(`${artifactPath(space, artifact.id)}/lock`, { key: space.ownerKey }), 401);
  });

  it('refuses missing, unknown and wrong keys with 401; the lock stays', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    await lock(space, artifact.id, alice.key);
    await expectKeyChecks(h, {
      method: 'DELETE',
      path: `${artifactPath(space, artifact.id)}/lock`,
      wrongKeys: await strangerKeys(space),
    });
    expect((await read(space, artifact.id)).lockedBy).toBe(alice.participantId);
  });
});

describe('downloadArtifact', () => {
  const download = (space: SpaceFixture, id: string, key?: string) =>
    fetch(`${srv.url}${artifactPath(space, id)}/download`, key ? { headers: { 'X-Private-Key': key } } : {});

  it('serves the exact bytes as a markdown attachment named after the artifact', async () => {
    const { space, alice, bob } = await room();
    const content = '# Plan\r\n\r\nCafé 😀 e\u0301\n';
    const artifact = await create(space, alice.key, { content });
    await moderate(space, bob, 'mute');
    const res = await download(space, artifact.id, bob.key);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="Plan.md"');
    expect(res.headers.get('api-version')).toBe('1');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(Buffer.from(content, 'utf8'));
  });

  it.each([
    [
      'Résumé 😀',
      'attachment; filename="R_sum_ _.md"; filename*=UTF-8\'\'R%C3%A9sum%C3%A9%20%F0%9F%98%80.md',
    ],
    [
      'say "hi" \\ a/b',
      'attachment; filename="say _hi_ _ a_b.md"; filename*=UTF-8\'\'say%20%22hi%22%20%5C%20a%2Fb.md',
    ],
    ["it's (v2)*", 'attachment; filename="it\'s (v2)*.md"'],
  ])('names %j per RFC 6266', async (name, header) => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key, { name });
    const res = await download(space, artifact.id, alice.key);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe(header);
  });

  it('answers JSON 404 for unknown artifacts and JSON 401 for missing, unknown and wrong keys', async () => {
    const { space, alice } = await room();
    const artifact = await create(space, alice.key);
    expectError(await h.get(`${artifactPath(space, UNKNOWN_ID)}/download`, { key: alice.key }), 404);
    expectError(await h.get(`${artifactPath(space, 'x')}/download`, { key: alice.key }), 404);
    expectError(
      await h.get(`/hub/space/${UNKNOWN_ID}/artifact/${artifact.id}/download`, { key: alice.key }),
      404,
    );
    await expectKeyChecks(h, {
      method: 'GET',
      path: `${artifactPath(space, artifact.id)}/download`,
      wrongKeys: await strangerKeys(space),
    });
    expectOk(await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
    expectError(await h.get(`${artifactPath(space, artifact.id)}/download`, { key: alice.key }), 401);
  });
});

describe('OpenAPI document', () => {
  it('documents every artifact operation, the raw download and diff routes included', async () => {
    const res = await h.get('/openapi.json');
    expectOk(res);
    const operations = new Map<string, { security?: unknown; responses: Record<string, unknown> }>();
    for (const item of Object.values(res.body.paths) as Record<string, any>[]) {
      for (const op of Object.values(item)) if (op?.operationId) operations.set(op.operationId, op);
    }
    for (const [id, statuses] of Object.entries({
      createArtifact: ['200', '400', '401', '403', '404', '409', '429'],
      listArtifacts: ['200', '401', '404', '429'],
      getArtifact: ['200', '401', '404', '429'],
      writeArtifact: ['200', '400', '401', '404', '409', '423', '429'],
      downloadArtifact: ['200', '401', '404', '429'],
      lockArtifact: ['200', '401', '403', '404', '423', '429'],
      heartbeatArtifactLock: ['200', '401', '404', '423', '429'],
      unlockArtifact: ['200', '401', '404', '423', '429'],
      listArtifactVersions: ['200', '401', '404', '429'],
      getArtifactVersion: ['200', '401', '404', '429'],
      restoreArtifactVersion: ['200', '401', '404', '423', '429'],
      diffArtifactVersions: ['200', '400', '401', '404', '413', '429'],
    })) {
      const op = operations.get(id);
      expect(op, id).toBeDefined();
      expect(Object.keys(op?.responses ?? {}).sort(), id).toEqual(statuses.sort());
      expect(op?.security, id).toEqual([{ spaceKey: [] }]);
    }
    const download = res.body.paths['/hub/space/{spaceId}/artifact/{artifactId}/download'].get;
    expect(Object.keys(download.responses['200'].content)).toEqual(['text/markdown']);
    const diff = res.body.paths['/hub/space/{spaceId}/artifact/{artifactId}/diff'].get;
    expect(Object.keys(diff.responses['200'].content)).toEqual(['text/x-diff']);
  });
});
