import { randomUUID } from 'node:crypto';
import { JOIN_KEY_WINDOW_MS, OffsetClock, schema, sweepCollectedJoinKeys } from '@convene/core';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { expectError, expectOk, participantRow, useServer } from './helpers';

/**
 * A private-space join hands its key only to the joiner: the invitation key is shared and the
 * joiner's id is visible to the space, so the pollToken the 202 carries is what proves the join.
 */
// Behind one trusted proxy, so that a test can join from several addresses (X-Forwarded-For).
// A clock the tests move past the window in which a joiner may collect its key again.
const clock = new OffsetClock();
const { srv, h } = useServer({ clock, config: { trustProxy: 1 } });

const statusOf = (spaceId: string, participantId: string, key: string, pollToken?: string) =>
  h.get(`/hub/space/${spaceId}/join/${participantId}`, {
    key,
    headers: pollToken === undefined ? {} : { 'X-Poll-Token': pollToken },
  });

describe('a private-space join', () => {
  it('answers the key only to the holder of its pollToken, not to another holder of the invitation', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const pending = await h.joinPending(space, { name: 'Joiner' });
    expect(pending.pollToken).toMatch(/^poll_[A-Za-z0-9_-]{43}$/);
    // Another holder of the same invitation key, who learnt the joiner's id.
    const thief = (token?: string) =>
      statusOf(space.spaceId, pending.participantId, pending.invitationKey, token);
    // The specification's poll, with the invitation key alone, may see that the join waits…
    const waiting = await thief();
    expectOk(waiting, 202);
    expect(waiting.body).toEqual({ status: 'pending' });
    expectError(await thief(`poll_${'A'.repeat(43)}`), 404);
    expectOk(
      await statusOf(space.spaceId, pending.participantId, pending.invitationKey, pending.pollToken),
      202,
    );
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${pending.participantId}/approve`, {
        key: space.ownerKey,
      }),
    );
    // …but never take its key.
    expectError(await thief(), 401);
    expectError(await thief(`poll_${'A'.repeat(43)}`), 404);
    // The thief's tries did not spend the key: the joiner collects it.
    const collected = await statusOf(
      space.spaceId,
      pending.participantId,
      pending.invitationKey,
      pending.pollToken,
    );
    expectOk(collected);
    expect(collected.body.participantPrivateKey).toMatch(/^[0-9a-f]{64}$/);
    expectOk(await h.get(`/hub/space/${space.spaceId}`, { key: collected.body.participantPrivateKey }));
    // The joiner may collect it again for a while (an answer lost on the way); nobody else may.
    const poll = () =>
      statusOf(space.spaceId, pending.participantId, pending.invitationKey, pending.pollToken);
    clock.advance(JOIN_KEY_WINDOW_MS - 60_000);
    const again = await poll();
    expectOk(again);
    expect(again.body.participantPrivateKey).toBe(collected.body.participantPrivateKey);
    expectError(await thief(), 401);
    expectError(await thief(`poll_${'B'.repeat(43)}`), 404);
    // The window runs from the first collection, which the second did not extend: then 404, saying why.
    clock.advance(60_000);
    const late = await poll();
    expectError(late, 404, 'join_key_collected');
    expect(late.body.error).toMatch(/^pending join request not found: .*already handed out/);
    // Stored as a hash only, and forgotten, with the sealed key, once the window is over.
    expect(await sweepCollectedJoinKeys(srv.server.database.db, clock.now(), 1000)).toBeGreaterThanOrEqual(1);
    const row = await participantRow(srv, space.spaceId, pending.participantId);
    expect(row).toMatchObject({
      pollTokenHash: null,
      invitationId: null,
      keyEnc: null,
      keyCollectedAt: null,
    });
    expect(JSON.stringify(row)).not.toContain(pending.pollToken);
    expectError(await poll(), 404, 'join_key_collected');
    expectOk(await h.get(`/hub/space/${space.spaceId}`, { key: collected.body.participantPrivateKey }));
  });

  it('hands the key of a join made before pollTokens existed out once, its ticket forgotten at once', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const pending = await h.joinPending(space);
    // Such a join has no pollToken hash, and is polled with the shared invitation key alone.
    const { participants } = schema;
    await srv.server.database.db
      .update(participants)
      .set({ pollTokenHash: null })
      .where(and(eq(participants.spaceId, space.spaceId), eq(participants.id, pending.participantId)));
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${pending.participantId}/approve`, {
        key: space.ownerKey,
      }),
    );
    const first = await statusOf(space.spaceId, pending.participantId, pending.invitationKey);
    expectOk(first);
    expect(first.body.participantPrivateKey).toMatch(/^[0-9a-f]{64}$/);
    // Anyone with the invitation could ask next: no second collection, and nothing kept.
    expectError(
      await statusOf(space.spaceId, pending.participantId, pending.invitationKey),
      404,
      'join_key_collected',
    );
    const row = await participantRow(srv, space.spaceId, pending.participantId);
    expect(row).toMatchObject({ invitationId: null, keyEnc: null, keyCollectedAt: null });
  });

  it('says a key collected before its participant was kicked or left was collected, not refused', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    for (const ending of ['kick', 'leave'] as const) {
      const pending = await h.joinPending(space, { name: `Gone by ${ending}` });
      const path = `/hub/space/${space.spaceId}/participants/${pending.participantId}`;
      expectOk(await h.post(`${path}/approve`, { key: space.ownerKey }));
      const poll = () =>
        statusOf(space.spaceId, pending.participantId, pending.invitationKey, pending.pollToken);
      const collected = await poll();
      expectOk(collected);
      if (ending === 'kick') expectOk(await h.post(`${path}/kick`, { key: space.ownerKey }));
      else
        expectOk(
          await h.post(`/hub/space/${space.spaceId}/leave`, { key: collected.body.participantPrivateKey }),
        );
      expectError(await poll(), 404, 'join_key_collected');
    }
  });

  it('keeps only the pollToken hash while waiting', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const pending = await h.joinPending(space);
    const row = await participantRow(srv, space.spaceId, pending.participantId);
    expect(row?.pollTokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(pending.pollToken);
  });

  it('never lets a pollToken work for another join or another space', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const first = await h.joinPending(space, { name: 'First' });
    const second = await h.joinPending(space, { name: 'Second' });
    const other = await h.createSpace({ privacy: 'private' });
    const elsewhere = await h.joinPending(other);
    for (const id of [first.participantId, second.participantId]) {
      expectOk(
        await h.post(`/hub/space/${space.spaceId}/participants/${id}/approve`, { key: space.ownerKey }),
      );
    }
    expectOk(
      await h.post(`/hub/space/${other.spaceId}/participants/${elsewhere.participantId}/approve`, {
        key: other.ownerKey,
      }),
    );
    // Second's token on first's join (same invitation key): nothing.
    expectError(
      await statusOf(space.spaceId, first.participantId, first.invitationKey, second.pollToken),
      404,
    );
    // Another space's join, its own invitation key and token, through this space: nothing.
    expectError(
      await statusOf(space.spaceId, elsewhere.participantId, elsewhere.invitationKey, elsewhere.pollToken),
      401,
    );
    expectError(
      await statusOf(space.spaceId, elsewhere.participantId, first.invitationKey, elsewhere.pollToken),
      404,
    );
    // Each joiner still collects its own.
    expectOk(await statusOf(space.spaceId, first.participantId, first.invitationKey, first.pollToken));
    expectOk(await statusOf(space.spaceId, second.participantId, second.invitationKey, second.pollToken));
    expectOk(
      await statusOf(other.spaceId, elsewhere.participantId, elsewhere.invitationKey, elsewhere.pollToken),
    );
  });
});

describe('a join repeated with the same Idempotency-Key', () => {
  /** A join as a proxy forwards it from this address (the server trusts one proxy). */
  const join = (
    spaceId: string,
    key: string,
    idempotencyKey: string,
    options: { name?: string; from?: string; userToken?: string } = {},
  ) =>
    h.post(`/hub/space/${spaceId}/join`, {
      key,
      headers: {
        'Idempotency-Key': idempotencyKey,
        'X-Forwarded-For': options.from ?? '10.0.0.1',
        ...(options.userToken ? { 'X-User-Token': options.userToken } : {}),
      },
      body: { name: options.name ?? 'Same' },
    });
  const names = async (space: { spaceId: string; ownerKey: string }) =>
    (
      (await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey })).body.participants as {
        name: string;
        isOwner: boolean;
      }[]
    )
      .filter((p) => !p.isOwner)
      .map((p) => p.name);

  it('replays the join to its caller (public space: the same key, one participant), and 422 for another body', async () => {
    const space = await h.createSpace();
    const invitationKey = await h.invite(space);
    const idempotencyKey = randomUUID();
    const first = await join(space.spaceId, invitationKey, idempotencyKey);
    const retry = await join(space.spaceId, invitationKey, idempotencyKey);
    expectOk(first);
    expectOk(retry);
    expect(retry.headers.get('idempotency-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(await names(space)).toEqual(['Same']);
    expectError(await join(space.spaceId, invitationKey, idempotencyKey, { name: 'Other' }), 422);
    expect(await names(space)).toEqual(['Same']);
  });

  it('replays a private-space join to its caller: the same participant and pollToken', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const invitationKey = await h.invite(space);
    const idempotencyKey = randomUUID();
    const first = await join(space.spaceId, invitationKey, idempotencyKey);
    const retry = await join(space.spaceId, invitationKey, idempotencyKey);
    expectOk(first, 202);
    expectOk(retry, 202);
    expect(retry.headers.get('idempotency-replayed')).toBe('true');
    expect(retry.body.pollToken).toBe(first.body.pollToken);
    expect(retry.body.participantId).toBe(first.body.participantId);
  });

  it('is never replayed to another holder of the invitation: another address or another user token joins afresh', async () => {
    for (const privacy of ['public', 'private'] as const) {
      const space = await h.createSpace({ privacy });
      const invitationKey = await h.invite(space);
      // A constant key, against the specification's advice: still no answer crosses callers.
      const shared = 'shared-constant-key';
      const first = await join(space.spaceId, invitationKey, shared);
      const elsewhere = await join(space.spaceId, invitationKey, shared, { from: '10.0.0.2' });
      const signedIn = await join(space.spaceId, invitationKey, shared, {
        userToken: `usr_${'a'.repeat(43)}`,
      });
      for (const other of [elsewhere, signedIn]) {
        expect(other.status).toBe(first.status);
        expect(other.headers.get('idempotency-replayed')).toBeNull();
        expect(other.body.participantId).not.toBe(first.body.participantId);
        if (privacy === 'public')
          expect(other.body.participantPrivateKey).not.toBe(first.body.participantPrivateKey);
        else expect(other.body.pollToken).not.toBe(first.body.pollToken);
      }
    }
  });
});
