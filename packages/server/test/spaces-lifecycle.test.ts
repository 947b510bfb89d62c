import { newId, OffsetClock, schema } from '@convene/core';
import { AuthenticationError, ConflictError, NotFoundError } from '@convene/sdk';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  expectAnswer,
  expectError,
  expectKeyChecks,
  expectOk,
  idOf,
  participantRow,
  recordedEvents,
  type SpaceFixture,
  sdkError,
  useServer,
} from './helpers';

const clock = new OffsetClock();

/**
 * A space's life as its owner's SDK client lives it; bodies that break the contract and the key
 * checks over raw HTTP.
 */
const { srv, h, sdk } = useServer({ clock });

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const view = (space: SpaceFixture, key = space.ownerKey) => h.get(`/hub/space/${space.spaceId}`, { key });
const update = (space: SpaceFixture, body: unknown, key: string | undefined = space.ownerKey) =>
  h.put(`/hub/space/${space.spaceId}`, { key, body });

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
    const { owner } = await sdk.createSpace({ name: 'Before', description: 'Old', agenda: 'A' });
    const res = await owner.update({ name: 'After', agenda: '1. ship' }).withResponse();
    expectAnswer(res);
    expect(res.data).toEqual({ ok: true });
    expect(await owner.get()).toMatchObject({ name: 'After', description: 'Old', agenda: '1. ship' });
    expectAnswer(await owner.update({ description: '' }).withResponse());
    expect(await owner.get()).toMatchObject({ name: 'After', description: '', agenda: '1. ship' });
  });

  it('accepts an empty update as a no-op', async () => {
    const space = await sdk.createSpace({ name: 'Same' });
    const res = await space.owner.update({}).withResponse();
    expectAnswer(res);
    expect(res.data).toEqual({ ok: true });
    expect((await space.owner.get()).name).toBe('Same');
    // A body-less PUT (which the SDK never sends) is the same empty update.
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
    const { ownerKey } = await sdk.createSpace();
    await sdkError(sdk.space(UNKNOWN_ID, ownerKey).update({ name: 'x' }), NotFoundError);
    await sdkError(sdk.space('xyz', ownerKey).update({ name: 'x' }), NotFoundError);
  });

  it('answers 409 "space is closed" once closed', async () => {
    const space = await sdk.createSpace();
    expectAnswer(await space.owner.close().withResponse());
    const error = await sdkError(space.owner.update({ name: 'Too late' }), ConflictError);
    expect(error.body).toEqual({ error: 'space is closed', code: 'space_closed' });
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
    const space = await sdk.createSpace();
    const res = await space.owner.close().withResponse();
    expectAnswer(res);
    expect(res.data).toEqual({ ok: true });
    const row = await spaceRow(space.spaceId);
    expect(row?.state).toBe('closed');
    expect(row?.closedAt).toBeInstanceOf(Date);
    const events = await recordedEvents(srv, space.spaceId, 'space-closed');
    expect(events.map((e) => e.data)).toEqual([{ spaceId: space.spaceId, reason: 'closed' }]);
  });

  it('stops every key of the space: 401 where 409 is not listed, 409 where it is', async () => {
    const space = await sdk.createSpace({ privacy: 'private' });
    const { owner } = space;
    const p = await sdk.joinActive(owner);
    const pending = await sdk.joinPending(owner);
    const invitation = (await owner.invitations.create()).publicInvitationKey;
    expectAnswer(await owner.close().withResponse());

    for (const client of [owner, p, sdk.space(space.spaceId, invitation)]) {
      const refused = await sdkError(client.get(), AuthenticationError);
      expect(refused.body).toEqual({
        error: 'space is closed: its keys no longer work',
        code: 'space_closed',
      });
    }
    expect((await sdkError(pending.check(), AuthenticationError)).code).toBe('space_closed');
    // One after another, as an agent would: each call starts when it is made.
    for (const call of [
      () => owner.update({ name: 'x' }),
      () => owner.close(),
      () => owner.invitations.create(),
      () => sdk.hub().join(space.spaceId, invitation, { name: 'Late' }),
      () => p.leave(),
    ]) {
      const error = await sdkError(call(), ConflictError);
      expect(error.body).toEqual({ error: 'space is closed', code: 'space_closed' });
    }
    // Only one close happened.
    expect(await recordedEvents(srv, space.spaceId, 'space-closed')).toHaveLength(1);
  });

  it('releases every lock of the space, announcing each once (a lapsed one too, if the sweep has not yet)', async () => {
    const space = await sdk.createSpace();
    const p = await sdk.joinActive(space.owner);
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
    const live = [artifact(space.ownerId, 600_000), artifact(idOf(p), 600_000)];
    const stale = artifact(idOf(p), -1000);
    await srv.server.database.db.insert(schema.artifacts).values([...live, stale]);
    expectAnswer(await space.owner.close().withResponse());
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
    const { ownerKey } = await sdk.createSpace();
    await sdkError(sdk.space(UNKNOWN_ID, ownerKey).close(), NotFoundError);
    await sdkError(sdk.space('123', ownerKey).close(), NotFoundError);
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
    const { owner } = await sdk.createSpace({ ttl: 120 });
    // Seconds are rounded up; a slow machine may take a second between two requests.
    expect((await owner.get()).ttlRemaining).toBeGreaterThanOrEqual(119);
    expect((await owner.get()).ttlRemaining).toBeLessThanOrEqual(120);
    clock.advance(30_000);
    expect((await owner.get()).ttlRemaining).toBeGreaterThanOrEqual(89);
    expect((await owner.get()).ttlRemaining).toBeLessThanOrEqual(90);
  });

  it('kills every key once the TTL has elapsed: 401 where 409 is not listed, 409 where it is', async () => {
    const space = await sdk.createSpace({ privacy: 'private', ttl: 60 });
    const { owner } = space;
    const p = await sdk.joinActive(owner);
    const pending = await sdk.joinPending(owner);
    const invitation = (await owner.invitations.create()).publicInvitationKey;
    clock.advance(50_000);
    expectAnswer(await p.get().withResponse());

    clock.advance(10_000);
    // Said as expired, not closed (the 409s keep decisions.md's "space is closed"; their code tells).
    for (const client of [owner, p, sdk.space(space.spaceId, invitation)]) {
      const refused = await sdkError(client.get(), AuthenticationError);
      expect(refused.body).toEqual({
        error: 'space has expired: its keys no longer work',
        code: 'space_expired',
      });
    }
    expect((await sdkError(pending.check(), AuthenticationError)).code).toBe('space_expired');
    for (const call of [
      () => owner.update({ name: 'x' }),
      () => owner.close(),
      () => owner.invitations.create(),
      () => sdk.hub().join(space.spaceId, invitation, { name: 'Late' }),
      () => owner.participants.approve(pending.participantId),
      () => owner.participants.mute(idOf(p)),
      () => owner.participants.kick(idOf(p)),
      () => p.leave(),
    ]) {
      const error = await sdkError(call(), ConflictError);
      expect(error.body).toEqual({ error: 'space is closed', code: 'space_expired' });
    }
    // Expiry is derived, never written; nothing changed.
    expect((await spaceRow(space.spaceId))?.state).toBe('open');
    expect((await participantRow(srv, space.spaceId, idOf(p)))?.status).toBe('active');
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
