import { newId, OffsetClock, schema } from '@convene/core';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  expectError,
  expectKeyChecks,
  expectOk,
  participantRow,
  recordedEvents,
  type SpaceFixture,
  useServer,
} from './helpers';

const clock = new OffsetClock();

const { srv, h } = useServer({ clock });

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const view = (space: SpaceFixture, key = space.ownerKey) => h.get(`/hub/space/${space.spaceId}`, { key });
const update = (space: SpaceFixture, body: unknown, key: string | undefined = space.ownerKey) =>
  h.put(`/hub/space/${space.spaceId}`, { key, body });
const close = (space: SpaceFixture, key: string | undefined = space.ownerKey) =>
  h.delete(`/hub/space/${space.spaceId}`, { key });

async function spaceRow(spaceId: string) {
  const [row] = await srv.server.database.db
    .select()
    .from(schema.spaces)
    .where(eq(schema.spaces.id, spaceId));
  return row;
}

/** Keys that must not work on owner-only operations of `space`. */
async function nonOwnerKeys(space: SpaceFixture): Promise<Record<string, string>> {
  const other = await h.createSpace();
  const { kicked, left } = await h.deadKeys(space);
  return {
    participant: (await h.joinActive(space)).key,
    invitation: await h.invite(space),
    'other space owner': other.ownerKey,
    kicked,
    left,
  };
}

describe('updateSpace', () => {
  it('changes only the fields given', async () => {
    const space = await h.createSpace({ name: 'Before', description: 'Old', agenda: 'A' });
    const res = await update(space, { name: 'After', agenda: '1. ship' });
    expectOk(res);
    expect(res.body).toEqual({ ok: true });
    expect((await view(space)).body).toMatchObject({ name: 'After', description: 'Old', agenda: '1. ship' });
    expectOk(await update(space, { description: '' }));
    expect((await view(space)).body).toMatchObject({ name: 'After', description: '', agenda: '1. ship' });
  });

  it('accepts an empty update as a no-op', async () => {
    const space = await h.createSpace({ name: 'Same' });
    const res = await update(space, {});
    expectOk(res);
    expect(res.body).toEqual({ ok: true });
    expect((await view(space)).body.name).toBe('Same');
    // A body-less PUT is the same empty update.
    expectOk(await h.put(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
  });

  it.each([
    ['an empty name', { name: '' }],
    ['a name over 200 characters', { name: 'x'.repeat(201) }],
    ['a description over 10,000 characters', { description: 'x'.repeat(10_001) }],
    ['an agenda over 10,000 characters', { agenda: 'x'.repeat(10_001) }],
    ['a non-string name', { name: 7 }],
    ['a null agenda', { agenda: null }],
  ])('rejects %s (400) and changes nothing', async (_label, body) => {
    const space = await h.createSpace({ name: 'Kept' });
    expectError(await update(space, body), 400);
    expect((await view(space)).body.name).toBe('Kept');
  });

  it('rejects malformed JSON (400)', async () => {
    const space = await h.createSpace();
    expectError(
      await h.put(`/hub/space/${space.spaceId}`, { key: space.ownerKey, body: '{', raw: true }),
      400,
    );
  });

  it('answers 404 for an unknown or non-UUID space', async () => {
    const space = await h.createSpace();
    expectError(await h.put(`/hub/space/${UNKNOWN_ID}`, { key: space.ownerKey, body: { name: 'x' } }), 404);
    expectError(await h.put('/hub/space/xyz', { key: space.ownerKey, body: { name: 'x' } }), 404);
  });

  it('answers 409 "space is closed" once closed', async () => {
    const space = await h.createSpace();
    expectOk(await close(space));
    const res = await update(space, { name: 'Too late' });
    expectError(res, 409);
    expect(res.body).toEqual({ error: 'space is closed' });
    expect((await spaceRow(space.spaceId))?.name).toBe('Test space');
  });

  it('refuses every key but the owner key', async () => {
    const space = await h.createSpace({ name: 'Untouched' });
    await expectKeyChecks(h, {
      method: 'PUT',
      path: `/hub/space/${space.spaceId}`,
      body: { name: 'Hijacked' },
      wrongKeys: await nonOwnerKeys(space),
    });
    expect((await view(space)).body.name).toBe('Untouched');
  });
});

describe('closeSpace', () => {
  it('closes the space: state closed, closedAt set, a space-closed event', async () => {
    const space = await h.createSpace();
    const res = await close(space);
    expectOk(res);
    expect(res.body).toEqual({ ok: true });
    const row = await spaceRow(space.spaceId);
    expect(row?.state).toBe('closed');
    expect(row?.closedAt).toBeInstanceOf(Date);
    const events = await recordedEvents(srv, space.spaceId, 'space-closed');
    expect(events.map((e) => e.data)).toEqual([{ spaceId: space.spaceId, reason: 'closed' }]);
  });

  it('stops every key of the space: 401 where 409 is not listed, 409 where it is', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const p = await h.joinActive(space);
    const pending = await h.joinPending(space);
    const invitation = await h.invite(space);
    expectOk(await close(space));

    for (const key of [space.ownerKey, p.key, invitation]) expectError(await view(space, key), 401);
    expectError(
      await h.get(`/hub/space/${space.spaceId}/join/${pending.participantId}`, {
        key: pending.invitationKey,
        headers: { 'X-Poll-Token': pending.pollToken },
      }),
      401,
    );
    for (const res of [
      await update(space, { name: 'x' }),
      await close(space),
      await h.post(`/hub/space/${space.spaceId}/invite`, { key: space.ownerKey }),
      await h.post(`/hub/space/${space.spaceId}/join`, { key: invitation, body: { name: 'Late' } }),
      await h.post(`/hub/space/${space.spaceId}/leave`, { key: p.key }),
    ]) {
      expectError(res, 409);
      expect(res.body).toEqual({ error: 'space is closed' });
    }
    // Only one close happened.
    expect(await recordedEvents(srv, space.spaceId, 'space-closed')).toHaveLength(1);
  });

  it('releases every lock of the space, announcing each once (a lapsed one too, if the sweep has not yet)', async () => {
    const space = await h.createSpace();
    const p = await h.joinActive(space);
    const now = clock.now();
    const artifact = (holder: string, expiresInMs: number) => ({
      spaceId: space.spaceId,
      id: newId(),
      name: 'doc',
      type: 'markdown' as const,
      content: '#',
      version: 1,
      createdBy: holder,
      updatedBy: holder,
      createdAt: now,
      updatedAt: now,
      lockedBy: holder,
      lockedAt: now,
      lockExpiresAt: new Date(now.getTime() + expiresInMs),
    });
    const live = [artifact(space.ownerId, 600_000), artifact(p.participantId, 600_000)];
    const stale = artifact(p.participantId, -1000);
    await srv.server.database.db.insert(schema.artifacts).values([...live, stale]);
    expectOk(await close(space));
    const rows = await srv.server.database.db
      .select({ lockedBy: schema.artifacts.lockedBy, lockExpiresAt: schema.artifacts.lockExpiresAt })
      .from(schema.artifacts)
      .where(eq(schema.artifacts.spaceId, space.spaceId));
    expect(rows).toEqual([
      { lockedBy: null, lockExpiresAt: null },
      { lockedBy: null, lockExpiresAt: null },
      { lockedBy: null, lockExpiresAt: null },
    ]);
    const unlocked = await recordedEvents(srv, space.spaceId, 'artifact-unlocked');
    expect(unlocked.map((e) => e.data.id).sort()).toEqual([...live, stale].map((a) => a.id).sort());
    // The unlocks come before the space-closed event.
    const kinds = (await recordedEvents(srv, space.spaceId)).map((e) => e.kind);
    expect(kinds.slice(-4)).toEqual([
      'artifact-unlocked',
      'artifact-unlocked',
      'artifact-unlocked',
      'space-closed',
    ]);
  });

  it('answers 404 for an unknown or non-UUID space', async () => {
    const space = await h.createSpace();
    expectError(await h.delete(`/hub/space/${UNKNOWN_ID}`, { key: space.ownerKey }), 404);
    expectError(await h.delete('/hub/space/123', { key: space.ownerKey }), 404);
  });

  it('refuses every key but the owner key, and leaves the space open', async () => {
    const space = await h.createSpace();
    await expectKeyChecks(h, {
      method: 'DELETE',
      path: `/hub/space/${space.spaceId}`,
      wrongKeys: await nonOwnerKeys(space),
    });
    expect((await view(space)).body.state).toBe('open');
  });
});

describe('TTL expiry (injected clock)', () => {
  it('counts ttlRemaining down with the clock', async () => {
    const space = await h.createSpace({ ttl: 120 });
    // Seconds are rounded up; a slow machine may take a second between two requests.
    expect((await view(space)).body.ttlRemaining).toBeGreaterThanOrEqual(119);
    expect((await view(space)).body.ttlRemaining).toBeLessThanOrEqual(120);
    clock.advance(30_000);
    expect((await view(space)).body.ttlRemaining).toBeGreaterThanOrEqual(89);
    expect((await view(space)).body.ttlRemaining).toBeLessThanOrEqual(90);
  });

  it('kills every key once the TTL has elapsed: 401 where 409 is not listed, 409 where it is', async () => {
    const space = await h.createSpace({ privacy: 'private', ttl: 60 });
    const p = await h.joinActive(space);
    const pending = await h.joinPending(space);
    const invitation = await h.invite(space);
    clock.advance(50_000);
    expectOk(await view(space, p.key));

    clock.advance(10_000);
    for (const key of [space.ownerKey, p.key, invitation]) expectError(await view(space, key), 401);
    expectError(
      await h.get(`/hub/space/${space.spaceId}/join/${pending.participantId}`, {
        key: pending.invitationKey,
        headers: { 'X-Poll-Token': pending.pollToken },
      }),
      401,
    );
    const base = `/hub/space/${space.spaceId}`;
    for (const res of [
      await update(space, { name: 'x' }),
      await close(space),
      await h.post(`${base}/invite`, { key: space.ownerKey }),
      await h.post(`${base}/join`, { key: invitation, body: { name: 'Late' } }),
      await h.post(`${base}/participants/${pending.participantId}/approve`, { key: space.ownerKey }),
      await h.post(`${base}/participants/${p.participantId}/mute`, { key: space.ownerKey }),
      await h.post(`${base}/participants/${p.participantId}/kick`, { key: space.ownerKey }),
      await h.post(`${base}/leave`, { key: p.key }),
    ]) {
      expectError(res, 409);
      expect(res.body).toEqual({ error: 'space is closed' });
    }
    // Expiry is derived, never written; nothing changed.
    expect((await spaceRow(space.spaceId))?.state).toBe('open');
    expect((await participantRow(srv, space.spaceId, p.participantId))?.status).toBe('active');
    const [pendingRow] = await srv.server.database.db
      .select({ status: schema.participants.status })
      .from(schema.participants)
      .where(
        and(
          eq(schema.participants.spaceId, space.spaceId),
          eq(schema.participants.id, pending.participantId),
        ),
      );
    expect(pendingRow?.status).toBe('waitingForApproval');
  });
});
