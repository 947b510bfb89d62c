import { limits } from '@convene/contract';
import { hashSecret, mintUserToken, newId, schema } from '@convene/core';
import { eq } from 'drizzle-orm';
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

const { srv, h } = useServer();

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const join = (spaceId: string, key: string | undefined, body: unknown = { name: 'Ada' }, headers = {}) =>
  h.post(`/hub/space/${spaceId}/join`, { key, body, headers });
const poll = (spaceId: string, participantId: string, key: string | undefined, pollToken?: string) =>
  h.get(`/hub/space/${spaceId}/join/${participantId}`, {
    key,
    headers: pollToken === undefined ? {} : { 'X-Poll-Token': pollToken },
  });

/** A human with a valid `usr_` token, made directly in the database. */
async function userWithToken(): Promise<{ userId: string; token: string }> {
  const userId = newId();
  const token = mintUserToken();
  const db = srv.server.database.db;
  await db
    .insert(schema.users)
    .values({ id: userId, email: `${userId}@example.test`, createdAt: new Date() });
  await db.insert(schema.apiTokens).values({
    id: newId(),
    userId,
    name: 'test',
    prefix: token.slice(0, 8),
    tokenHash: hashSecret(token),
    createdAt: new Date(),
    expiresAt: new Date(Date.now() + 3_600_000),
  });
  return { userId, token };
}

/** Keys of every type that must not work where only the owner key does. */
async function strangerKeys(space: SpaceFixture): Promise<Record<string, string>> {
  const other = await h.createSpace();
  const { kicked, left } = await h.deadKeys(space);
  return {
    participant: (await h.joinActive(space)).key,
    invitation: await h.invite(space),
    'other space owner': other.ownerKey,
    'other space invitation': await h.invite(other),
    kicked,
    left,
  };
}

describe('createInvitation', () => {
  it('mints an invitation key with its browser and agent links', async () => {
    const space = await h.createSpace();
    const res = await h.post(`/hub/space/${space.spaceId}/invite`, { key: space.ownerKey });
    expectOk(res);
    const key: string = res.body.publicInvitationKey;
    expect(key).toMatch(/^inv_[A-Za-z0-9_-]{32}$/);
    expect(res.body).toEqual({
      humanLink: `${srv.url}/join/${space.spaceId}#key=${key}`,
      agentLink: `${srv.url}/hub/space/${space.spaceId}/agent.md?key=${encodeURIComponent(key)}`,
      publicInvitationKey: key,
    });
    // Every call mints a fresh key; each one works.
    const second = await h.post(`/hub/space/${space.spaceId}/invite`, { key: space.ownerKey });
    expect(second.body.publicInvitationKey).not.toBe(key);
    expectOk(await h.get(`/hub/space/${space.spaceId}`, { key }));
    expectOk(await h.get(`/hub/space/${space.spaceId}`, { key: second.body.publicInvitationKey }));
  });

  it('stores only the hash of the invitation key', async () => {
    const space = await h.createSpace();
    const key = await h.invite(space);
    const rows = await srv.server.database.db
      .select()
      .from(schema.invitations)
      .where(eq(schema.invitations.spaceId, space.spaceId));
    expect(rows).toHaveLength(1);
    expect(rows[0]?.keyHash).toBe(hashSecret(key));
    expect(JSON.stringify(rows)).not.toContain(key);
  });

  it('answers 404 for an unknown or non-UUID space', async () => {
    const space = await h.createSpace();
    expectError(await h.post(`/hub/space/${UNKNOWN_ID}/invite`, { key: space.ownerKey }), 404);
    expectError(await h.post('/hub/space/nope/invite', { key: space.ownerKey }), 404);
  });

  it('answers 409 on a closed space', async () => {
    const space = await h.createSpace();
    expectOk(await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
    const res = await h.post(`/hub/space/${space.spaceId}/invite`, { key: space.ownerKey });
    expectError(res, 409);
    expect(res.body).toEqual({ error: 'space is closed' });
  });

  it('refuses every key but the owner key of the space', async () => {
    const space = await h.createSpace();
    await expectKeyChecks(h, {
      method: 'POST',
      path: `/hub/space/${space.spaceId}/invite`,
      wrongKeys: await strangerKeys(space),
    });
  });
});

describe('joinSpace', () => {
  it('admits a joiner of a public space at once (200) with a working key', async () => {
    const space = await h.createSpace({ privacy: 'public' });
    const invitation = await h.invite(space);
    const res = await join(space.spaceId, invitation, { name: 'Ada', role: 'reviewer', isHuman: true });
    expectOk(res);
    expect(res.headers.get('location')).toBeNull();
    expect(Object.keys(res.body).sort()).toEqual(['participantId', 'participantPrivateKey']);
    expect(res.body.participantPrivateKey).toMatch(/^[0-9a-f]{64}$/);
    expect(res.body.participantId).toMatch(/^[0-9a-f-]{36}$/);

    const view = await h.get(`/hub/space/${space.spaceId}`, { key: res.body.participantPrivateKey });
    expectOk(view);
    expect(view.body.participants).toContainEqual({
      participantId: res.body.participantId,
      name: 'Ada',
      role: 'reviewer',
      avatarUrl: `${srv.url}/avatar/${res.body.participantId}.svg`,
      status: 'active',
      isOwner: false,
      isHuman: true,
    });
  });

  it('puts a joiner of a private space in waitingForApproval (202 with Location)', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const invitation = await h.invite(space);
    const res = await join(space.spaceId, invitation, { name: 'Bob' });
    expectOk(res, 202);
    const statusUrl = `${srv.url}/hub/space/${space.spaceId}/join/${res.body.participantId}`;
    expect(res.body).toEqual({
      participantId: res.body.participantId,
      status: 'pending',
      statusUrl,
      pollToken: expect.stringMatching(/^poll_[A-Za-z0-9_-]{43}$/),
    });
    expect(res.headers.get('location')).toBe(statusUrl);

    const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect(view.body.participants).toContainEqual(
      expect.objectContaining({
        participantId: res.body.participantId,
        name: 'Bob',
        role: '',
        status: 'waitingForApproval',
        isHuman: false,
      }),
    );
  });

  it('appends a participant-status event for each join, active or waiting', async () => {
    const pub = await h.createSpace();
    const active = await h.joinActive(pub, { name: 'Active' });
    const priv = await h.createSpace({ privacy: 'private' });
    const waiting = await h.joinPending(priv, { name: 'Waiting' });
    expect((await recordedEvents(srv, pub.spaceId, 'participant-status')).map((e) => e.data)).toEqual([
      {
        participantId: active.participantId,
        name: 'Active',
        role: 'tester',
        avatarUrl: `${srv.url}/avatar/${active.participantId}.svg`,
        status: 'active',
        isOwner: false,
        isHuman: false,
      },
    ]);
    const events = await recordedEvents(srv, priv.spaceId, 'participant-status');
    expect(events.map((e) => [e.data.participantId, e.data.status])).toEqual([
      [waiting.participantId, 'waitingForApproval'],
    ]);
  });

  it('stores keys only as hashes (a sealed copy only while a private joiner has not collected it)', async () => {
    const space = await h.createSpace();
    const p = await h.joinActive(space);
    const row = await participantRow(srv, space.spaceId, p.participantId);
    expect(row?.keyHash).toBe(hashSecret(p.key));
    expect(row?.keyEnc).toBeNull();
    expect(JSON.stringify(row)).not.toContain(p.key);
    const owner = await participantRow(srv, space.spaceId, space.ownerId);
    expect(owner?.keyHash).toBe(hashSecret(space.ownerKey));
    expect(JSON.stringify(owner)).not.toContain(space.ownerKey);

    const priv = await h.createSpace({ privacy: 'private' });
    const pending = await h.joinPending(priv);
    const waitingRow = await participantRow(srv, priv.spaceId, pending.participantId);
    expect(waitingRow?.keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(waitingRow?.keyEnc).toMatch(/^v1\./);
    expectOk(
      await h.post(`/hub/space/${priv.spaceId}/participants/${pending.participantId}/approve`, {
        key: priv.ownerKey,
      }),
    );
    const collected = await poll(
      priv.spaceId,
      pending.participantId,
      pending.invitationKey,
      pending.pollToken,
    );
    expectOk(collected);
    const after = await participantRow(srv, priv.spaceId, pending.participantId);
    expect(after?.keyHash).toBe(hashSecret(collected.body.participantPrivateKey));
    expect(after?.keyEnc).toBeNull();
    expect(waitingRow?.keyEnc).not.toContain(collected.body.participantPrivateKey);
    expect(JSON.stringify(after)).not.toContain(collected.body.participantPrivateKey);
  });

  it('links the participant to the human of a valid X-User-Token and keeps its key sealed', async () => {
    const { userId, token } = await userWithToken();
    const space = await h.createSpace();
    const res = await join(
      space.spaceId,
      await h.invite(space),
      { name: 'Linked' },
      { 'X-User-Token': token },
    );
    expectOk(res);
    const row = await participantRow(srv, space.spaceId, res.body.participantId);
    expect(row?.userId).toBe(userId);
    expect(row?.keyEnc).toMatch(/^v1\./);
    expect(srv.server.deps.box.decrypt(row?.keyEnc ?? '')).toBe(res.body.participantPrivateKey);
    expect(row?.keyEnc).not.toContain(res.body.participantPrivateKey);
  });

  it('silently ignores an invalid X-User-Token', async () => {
    const space = await h.createSpace();
    for (const token of ['usr_nope', 'garbage', '']) {
      const res = await join(
        space.spaceId,
        await h.invite(space),
        { name: 'Anon' },
        { 'X-User-Token': token },
      );
      expectOk(res);
      const row = await participantRow(srv, space.spaceId, res.body.participantId);
      expect(row?.userId).toBeNull();
      expect(row?.keyEnc).toBeNull();
    }
  });

  it('lets names repeat: every join is a new participant', async () => {
    const space = await h.createSpace();
    const a = await h.joinActive(space, { name: 'Twin' });
    const b = await h.joinActive(space, { name: 'Twin' });
    expect(a.participantId).not.toBe(b.participantId);
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect(view.body.participants.filter((p: any) => p.name === 'Twin')).toHaveLength(2);
  });

  it.each([
    ['no name', {}],
    ['an empty name', { name: '' }],
    ['a name over 200 characters', { name: 'x'.repeat(201) }],
    ['a role over 10,000 characters', { name: 'ok', role: 'x'.repeat(10_001) }],
    ['a non-string name', { name: 42 }],
    ['a non-string role', { name: 'ok', role: ['a'] }],
  ])('rejects a body with %s (400)', async (_label, body) => {
    const space = await h.createSpace();
    expectError(await join(space.spaceId, await h.invite(space), body), 400);
  });

  it('answers 404 for an unknown or non-UUID space', async () => {
    const space = await h.createSpace();
    const invitation = await h.invite(space);
    expectError(await join(UNKNOWN_ID, invitation), 404);
    expectError(await join('not-a-uuid', invitation), 404);
  });

  it('answers 409 on a closed space', async () => {
    const space = await h.createSpace();
    const invitation = await h.invite(space);
    expectOk(await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
    const res = await join(space.spaceId, invitation);
    expectError(res, 409);
    expect(res.body).toEqual({ error: 'space is closed' });
  });

  it(`answers 409 once a space has ${limits.participantsPerSpace} participants`, async () => {
    const space = await h.createSpace();
    const invitation = await h.invite(space);
    const now = new Date();
    // The owner plus 998 joined directly in the database leaves room for exactly one more.
    await srv.server.database.db.insert(schema.participants).values(
      Array.from({ length: limits.participantsPerSpace - 2 }, (_, i) => ({
        spaceId: space.spaceId,
        id: newId(),
        name: `p${i}`,
        status: 'left' as const,
        createdAt: now,
        updatedAt: now,
      })),
    );
    expectOk(await join(space.spaceId, invitation, { name: 'Last' }));
    const res = await join(space.spaceId, invitation, { name: 'One too many' });
    expectError(res, 409);
    expect(res.body.error).toMatch(/1000 participants/);
  });

  it('accepts only an invitation key of the space', async () => {
    const space = await h.createSpace();
    const other = await h.createSpace();
    await expectKeyChecks(h, {
      method: 'POST',
      path: `/hub/space/${space.spaceId}/join`,
      body: { name: 'Eve' },
      wrongKeys: {
        owner: space.ownerKey,
        participant: (await h.joinActive(space)).key,
        'other space invitation': await h.invite(other),
        'other space owner': other.ownerKey,
        ...(await h.deadKeys(space)),
      },
    });
  });
});

describe('getJoinStatus', () => {
  it('answers 202 pending until approval, then 200 with a working key exactly once', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const pending = await h.joinPending(space);

    const waiting = await poll(
      space.spaceId,
      pending.participantId,
      pending.invitationKey,
      pending.pollToken,
    );
    expectOk(waiting, 202);
    expect(waiting.body).toEqual({ status: 'pending' });
    // Polling does not change anything.
    expectOk(await poll(space.spaceId, pending.participantId, pending.invitationKey, pending.pollToken), 202);

    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${pending.participantId}/approve`, {
        key: space.ownerKey,
      }),
    );
    const approved = await poll(
      space.spaceId,
      pending.participantId,
      pending.invitationKey,
      pending.pollToken,
    );
    expectOk(approved);
    expect(Object.keys(approved.body)).toEqual(['participantPrivateKey']);
    expect(approved.body.participantPrivateKey).toMatch(/^[0-9a-f]{64}$/);
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: approved.body.participantPrivateKey });
    expectOk(view);
    expect(view.body.participants).toContainEqual(
      expect.objectContaining({ participantId: pending.participantId, status: 'active' }),
    );

    // Handed out once: a later poll (the joiner's or anyone's with the same invitation key) is 404.
    const again = await poll(space.spaceId, pending.participantId, pending.invitationKey, pending.pollToken);
    expectError(again, 404);
    expect(again.body.error).toMatch(/not found/);
  });

  it('hands out the key of a participant muted before collecting it', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const pending = await h.joinPending(space);
    const base = `/hub/space/${space.spaceId}/participants/${pending.participantId}`;
    expectOk(await h.post(`${base}/approve`, { key: space.ownerKey }));
    expectOk(await h.post(`${base}/mute`, { key: space.ownerKey }));
    const res = await poll(space.spaceId, pending.participantId, pending.invitationKey, pending.pollToken);
    expectOk(res);
    expectOk(await h.get(`/hub/space/${space.spaceId}`, { key: res.body.participantPrivateKey }));
  });

  it('keeps the sealed key of a linked human after collection (for key recovery)', async () => {
    const { userId, token } = await userWithToken();
    const space = await h.createSpace({ privacy: 'private' });
    const pending = await h.joinPending(space, {}, { headers: { 'X-User-Token': token } });
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${pending.participantId}/approve`, {
        key: space.ownerKey,
      }),
    );
    const res = await poll(space.spaceId, pending.participantId, pending.invitationKey, pending.pollToken);
    expectOk(res);
    const row = await participantRow(srv, space.spaceId, pending.participantId);
    expect(row?.userId).toBe(userId);
    expect(srv.server.deps.box.decrypt(row?.keyEnc ?? '')).toBe(res.body.participantPrivateKey);
    expectError(
      await poll(space.spaceId, pending.participantId, pending.invitationKey, pending.pollToken),
      404,
    );
  });

  it('answers 404 with a reason once the owner refused the join by kicking', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const pending = await h.joinPending(space);
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${pending.participantId}/kick`, {
        key: space.ownerKey,
      }),
    );
    const res = await poll(space.spaceId, pending.participantId, pending.invitationKey, pending.pollToken);
    expectError(res, 404);
    expect(res.body.error).toMatch(/refused/);
  });

  it('answers 404 to another invitation key of the same space, and for ids it never issued', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const pending = await h.joinPending(space);
    const otherInvitation = await h.invite(space);
    expectError(await poll(space.spaceId, pending.participantId, otherInvitation, pending.pollToken), 404);
    expectError(await poll(space.spaceId, UNKNOWN_ID, pending.invitationKey, pending.pollToken), 404);
    expectError(await poll(space.spaceId, 'not-a-uuid', pending.invitationKey, pending.pollToken), 404);
    expectError(await poll(space.spaceId, space.ownerId, pending.invitationKey, pending.pollToken), 404);
    expectError(await poll(UNKNOWN_ID, pending.participantId, pending.invitationKey, pending.pollToken), 404);
    // A public joiner got its key in the join response: nothing to poll for.
    const pub = await h.createSpace();
    const invitation = await h.invite(pub);
    const joined = await join(pub.spaceId, invitation);
    expectError(await poll(pub.spaceId, joined.body.participantId, invitation), 404);
    // The failed polls did not spend the pending key.
    expectOk(await poll(space.spaceId, pending.participantId, pending.invitationKey, pending.pollToken), 202);
  });

  it('hides joiners from invitation-key holders until their key is collected', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const pending = await h.joinPending(space);
    const visibleTo = async (key: string) =>
      (await h.get(`/hub/space/${space.spaceId}`, { key })).body.participants.some(
        (p: any) => p.participantId === pending.participantId,
      );
    expect(await visibleTo(pending.invitationKey)).toBe(false);
    expect(await visibleTo(space.ownerKey)).toBe(true);
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${pending.participantId}/approve`, {
        key: space.ownerKey,
      }),
    );
    expect(await visibleTo(pending.invitationKey)).toBe(false);
    expectOk(await poll(space.spaceId, pending.participantId, pending.invitationKey, pending.pollToken));
    expect(await visibleTo(pending.invitationKey)).toBe(true);
  });

  it('answers 401 once the space is closed', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const pending = await h.joinPending(space);
    expectOk(await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
    expectError(
      await poll(space.spaceId, pending.participantId, pending.invitationKey, pending.pollToken),
      401,
    );
  });

  it('accepts only an invitation key of the space', async () => {
    const space = await h.createSpace({ privacy: 'private' });
    const pending = await h.joinPending(space);
    const other = await h.createSpace();
    await expectKeyChecks(h, {
      method: 'GET',
      path: `/hub/space/${space.spaceId}/join/${pending.participantId}`,
      wrongKeys: {
        owner: space.ownerKey,
        participant: (await h.joinActive(space)).key,
        'other space invitation': await h.invite(other),
        ...(await h.deadKeys(space)),
      },
    });
    // None of the refused polls spent the pending key.
    expectOk(await poll(space.spaceId, pending.participantId, pending.invitationKey, pending.pollToken), 202);
  });
});
