import { limits } from '@convene/contract';
import {
  hashSecret,
  JOIN_KEY_WINDOW_MS,
  mintUserToken,
  newId,
  schema,
  sweepCollectedJoinKeys,
} from '@convene/core';
import {
  AuthenticationError,
  ConflictError,
  NotFoundError,
  type PendingJoinInit,
  type SpaceClient,
} from '@convene/sdk';
import { eq } from 'drizzle-orm';
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

/**
 * Invitations and joins as the SDK makes them; the exact wire shapes (which fields a join answers,
 * Location), bodies that break the contract, and missing or wrong keys over raw HTTP.
 */
const { srv, h, sdk } = useServer();

/** What the sweep does once the window in which a joiner may collect its key again is over. */
const sweepAfterJoinKeyWindow = () =>
  sweepCollectedJoinKeys(srv.server.database.db, new Date(Date.now() + JOIN_KEY_WINDOW_MS + 1000), 10_000);

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
    const { owner, spaceId } = await sdk.createSpace();
    const res = await owner.invitations.create().withResponse();
    expectAnswer(res);
    const key = res.data.publicInvitationKey;
    expect(key).toMatch(/^inv_[A-Za-z0-9_-]{32}$/);
    expect(res.data).toEqual({
      humanLink: `${srv.url}/join/${spaceId}#key=${key}`,
      agentLink: `${srv.url}/hub/space/${spaceId}/agent.md?key=${encodeURIComponent(key)}`,
      publicInvitationKey: key,
    });
    // Every call mints a fresh key; each one works.
    const second = await owner.invitations.create();
    expect(second.publicInvitationKey).not.toBe(key);
    expectAnswer(await sdk.space(spaceId, key).get().withResponse());
    expectAnswer(await sdk.space(spaceId, second.publicInvitationKey).get().withResponse());
  });

  it('stores only the hash of the invitation key', async () => {
    const space = await sdk.createSpace();
    const key = (await space.owner.invitations.create()).publicInvitationKey;
    const rows = await srv.server.database.db
      .select()
      .from(schema.invitations)
      .where(eq(schema.invitations.spaceId, space.spaceId));
    expect(rows).toHaveLength(1);
    expect(rows[0]?.keyHash).toBe(hashSecret(key));
    expect(JSON.stringify(rows)).not.toContain(key);
  });

  it('answers 404 for an unknown or non-UUID space', async () => {
    const { ownerKey } = await sdk.createSpace();
    await sdkError(sdk.space(UNKNOWN_ID, ownerKey).invitations.create(), NotFoundError);
    await sdkError(sdk.space('nope', ownerKey).invitations.create(), NotFoundError);
  });

  it('answers 409 on a closed space', async () => {
    const { owner } = await sdk.createSpace();
    expectAnswer(await owner.close().withResponse());
    const error = await sdkError(owner.invitations.create(), ConflictError);
    expect(error.body).toEqual({ error: 'space is closed', code: 'space_closed' });
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
      // The getSpace itself: the server saw the new key work.
      lastSeenAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      lastReadSeq: 0,
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
    const pub = await sdk.createSpace();
    const active = await sdk.joinActive(pub.owner, { name: 'Active' });
    const priv = await sdk.createSpace({ privacy: 'private' });
    const waiting = await sdk.joinPending(priv.owner, { name: 'Waiting' });
    expect((await recordedEvents(srv, pub.spaceId, 'participant-status')).map((e) => e.data)).toEqual([
      {
        participantId: active.participantId,
        name: 'Active',
        role: 'tester',
        avatarUrl: `${srv.url}/avatar/${active.participantId}.svg`,
        status: 'active',
        isOwner: false,
        isHuman: false,
        lastReadSeq: 0,
      },
    ]);
    const events = await recordedEvents(srv, priv.spaceId, 'participant-status');
    expect(events.map((e) => [e.data.participantId, e.data.status])).toEqual([
      [waiting.participantId, 'waitingForApproval'],
    ]);
  });

  it('stores keys only as hashes (a sealed copy only while a private joiner has not collected it)', async () => {
    const space = await sdk.createSpace();
    const p = await sdk.joinActive(space.owner);
    const row = await participantRow(srv, space.spaceId, idOf(p));
    expect(row?.keyHash).toBe(hashSecret(p.key));
    expect(row?.keyEnc).toBeNull();
    expect(JSON.stringify(row)).not.toContain(p.key);
    const owner = await participantRow(srv, space.spaceId, space.ownerId);
    expect(owner?.keyHash).toBe(hashSecret(space.ownerKey));
    expect(JSON.stringify(owner)).not.toContain(space.ownerKey);

    const priv = await sdk.createSpace({ privacy: 'private' });
    const pending = await sdk.joinPending(priv.owner);
    const waitingRow = await participantRow(srv, priv.spaceId, pending.participantId);
    expect(waitingRow?.keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(waitingRow?.keyEnc).toMatch(/^v1\./);
    expectAnswer(await priv.owner.participants.approve(pending.participantId).withResponse());
    const collected = await pending.check().withResponse();
    expectAnswer(collected);
    const key = (collected.data as SpaceClient).key;
    const after = await participantRow(srv, priv.spaceId, pending.participantId);
    expect(after?.keyHash).toBe(hashSecret(key));
    expect(waitingRow?.keyEnc).not.toContain(key);
    expect(JSON.stringify(after)).not.toContain(key);
    // Sealed while the joiner may collect it again, forgotten once that window is over.
    expect(after?.keyEnc).toMatch(/^v1\./);
    await sweepAfterJoinKeyWindow();
    const swept = await participantRow(srv, priv.spaceId, pending.participantId);
    expect(swept?.keyEnc).toBeNull();
    expect(swept?.keyHash).toBe(hashSecret(key));
  });

  it('links the participant to the human of a valid X-User-Token and keeps its key sealed', async () => {
    const { userId, token } = await userWithToken();
    const { owner, spaceId } = await sdk.createSpace();
    const res = await sdk.joinActive(owner, { name: 'Linked' }, sdk.hub({ userToken: token }));
    const row = await participantRow(srv, spaceId, idOf(res));
    expect(row?.userId).toBe(userId);
    expect(row?.keyEnc).toMatch(/^v1\./);
    expect(srv.server.deps.box.current.decrypt(row?.keyEnc ?? '')).toBe(res.key);
    expect(row?.keyEnc).not.toContain(res.key);
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
    const { owner } = await sdk.createSpace();
    const a = await sdk.joinActive(owner, { name: 'Twin' });
    const b = await sdk.joinActive(owner, { name: 'Twin' });
    expect(a.participantId).not.toBe(b.participantId);
    const view = await owner.get();
    expect(view.participants.filter((p) => p.name === 'Twin')).toHaveLength(2);
  });

  it.each([
    ['no name', {}],
    ['an empty name', { name: '' }],
    ['a blank name', { name: '  ' }],
    ['a name of characters nothing draws (zero-width space, word joiner)', { name: '\u200B\u2060' }],
    ['a name over 200 characters', { name: 'x'.repeat(201) }],
    ['a role over 10,000 characters', { name: 'ok', role: 'x'.repeat(10_001) }],
    ['a non-string name', { name: 42 }],
    ['a non-string role', { name: 'ok', role: ['a'] }],
  ])('rejects a body with %s (400)', async (_label, body) => {
    const space = await h.createSpace();
    expectError(await join(space.spaceId, await h.invite(space), body), 400);
  });

  it('answers 404 for an unknown or non-UUID space', async () => {
    const { owner } = await sdk.createSpace();
    const invitation = (await owner.invitations.create()).publicInvitationKey;
    await sdkError(sdk.hub().join(UNKNOWN_ID, invitation, { name: 'Ada' }), NotFoundError);
    await sdkError(sdk.hub().join('not-a-uuid', invitation, { name: 'Ada' }), NotFoundError);
  });

  it('answers 409 on a closed space', async () => {
    const { owner } = await sdk.createSpace();
    const invitation = await owner.invitations.create();
    expectAnswer(await owner.close().withResponse());
    const error = await sdkError(sdk.hub().join(invitation.agentLink, { name: 'Ada' }), ConflictError);
    expect(error.body).toEqual({ error: 'space is closed', code: 'space_closed' });
  });

  it(`answers 409 once a space has ${limits.participantsPerSpace} participants`, async () => {
    const space = await sdk.createSpace();
    const invitation = await space.owner.invitations.create();
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
    expectAnswer(await sdk.hub().join(invitation.agentLink, { name: 'Last' }).withResponse());
    const error = await sdkError(
      sdk.hub().join(invitation.agentLink, { name: 'One too many' }),
      ConflictError,
    );
    expect(error.body?.error).toMatch(/1000 participants/);
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
  it('answers 202 pending until approval, then 200 with a working key, again only to the joiner and only for a while', async () => {
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

    // The joiner may poll again and get the same key while the window lasts (an answer lost on
    // the way); anyone else with the invitation key may not.
    const again = await poll(space.spaceId, pending.participantId, pending.invitationKey, pending.pollToken);
    expectOk(again);
    expect(again.body).toEqual(approved.body);
    expectError(await poll(space.spaceId, pending.participantId, pending.invitationKey), 401);
    // Then it is forgotten: 404.
    await sweepAfterJoinKeyWindow();
    const late = await poll(space.spaceId, pending.participantId, pending.invitationKey, pending.pollToken);
    expectError(late, 404, 'join_key_collected');
    expect(late.body.error).toMatch(/not found/);
  });

  it('hands out the key of a participant muted before collecting it', async () => {
    const { owner } = await sdk.createSpace({ privacy: 'private' });
    const pending = await sdk.joinPending(owner);
    expectAnswer(await owner.participants.approve(pending.participantId).withResponse());
    expectAnswer(await owner.participants.mute(pending.participantId).withResponse());
    const res = await pending.check().withResponse();
    expectAnswer(res);
    expectAnswer(await (res.data as SpaceClient).get().withResponse());
  });

  it('keeps the sealed key of a linked human after collection (for key recovery)', async () => {
    const { userId, token } = await userWithToken();
    const { owner, spaceId } = await sdk.createSpace({ privacy: 'private' });
    const joiner = sdk.hub({ userToken: token });
    const pending = await sdk.joinPending(owner, {}, joiner);
    expectAnswer(await owner.participants.approve(pending.participantId).withResponse());
    const res = await pending.check().withResponse();
    expectAnswer(res);
    const row = await participantRow(srv, spaceId, pending.participantId);
    expect(row?.userId).toBe(userId);
    expect(srv.server.deps.box.current.decrypt(row?.keyEnc ?? '')).toBe((res.data as SpaceClient).key);
    // A join resumed elsewhere (from its JSON) collects the same key while the window lasts…
    const resumed = await joiner.pendingJoin(pending.toJSON()).check();
    expect(resumed?.key).toBe((res.data as SpaceClient).key);
    // …and not after, while the linked human's sealed copy stays for key recovery.
    await sweepAfterJoinKeyWindow();
    await sdkError(joiner.pendingJoin(pending.toJSON()).check(), NotFoundError);
    const kept = await participantRow(srv, spaceId, pending.participantId);
    expect(srv.server.deps.box.current.decrypt(kept?.keyEnc ?? '')).toBe((res.data as SpaceClient).key);
  });

  it('answers 404 with a reason once the owner refused the join by kicking', async () => {
    const { owner } = await sdk.createSpace({ privacy: 'private' });
    const pending = await sdk.joinPending(owner);
    expectAnswer(await owner.participants.kick(pending.participantId).withResponse());
    const error = await sdkError(pending.check(), NotFoundError);
    expect(error.body?.error).toMatch(/refused/);
  });

  it('answers 404 to another invitation key of the same space, and for ids it never issued', async () => {
    const { owner, ownerId } = await sdk.createSpace({ privacy: 'private' });
    const pending = await sdk.joinPending(owner);
    const otherInvitation = (await owner.invitations.create()).publicInvitationKey;
    const check = (init: Partial<PendingJoinInit>) =>
      sdk
        .hub()
        .pendingJoin({
          spaceId: pending.spaceId,
          invitationKey: pending.invitationKey,
          participantId: pending.participantId,
          pollToken: pending.pollToken,
          ...init,
        })
        .check();
    await sdkError(check({ invitationKey: otherInvitation }), NotFoundError);
    await sdkError(check({ participantId: UNKNOWN_ID }), NotFoundError);
    await sdkError(check({ participantId: 'not-a-uuid' }), NotFoundError);
    await sdkError(check({ participantId: ownerId }), NotFoundError);
    await sdkError(check({ spaceId: UNKNOWN_ID }), NotFoundError);
    // A public joiner got its key in the join response: nothing to poll for.
    const pub = await sdk.createSpace();
    const invitation = (await pub.owner.invitations.create()).publicInvitationKey;
    const joined = await sdk.hub().join(pub.spaceId, invitation, { name: 'Ada' });
    await sdkError(
      sdk
        .hub()
        .pendingJoin({
          spaceId: pub.spaceId,
          invitationKey: invitation,
          participantId: idOf(joined),
        })
        .check(),
      NotFoundError,
    );
    // The failed polls did not spend the pending key.
    const still = await pending.check().withResponse();
    expectAnswer(still, 202);
    expect(still.data).toBeNull();
  });

  it('hides joiners from invitation-key holders until their key is collected', async () => {
    const { owner } = await sdk.createSpace({ privacy: 'private' });
    const pending = await sdk.joinPending(owner);
    const visibleTo = async (client: SpaceClient) =>
      (await client.get()).participants.some((p) => p.participantId === pending.participantId);
    const invited = sdk.space(pending.spaceId, pending.invitationKey);
    expect(await visibleTo(invited)).toBe(false);
    expect(await visibleTo(owner)).toBe(true);
    expectAnswer(await owner.participants.approve(pending.participantId).withResponse());
    expect(await visibleTo(invited)).toBe(false);
    expectAnswer(await pending.check().withResponse());
    expect(await visibleTo(invited)).toBe(true);
  });

  it('answers 401 once the space is closed', async () => {
    const { owner } = await sdk.createSpace({ privacy: 'private' });
    const pending = await sdk.joinPending(owner);
    expectAnswer(await owner.close().withResponse());
    await sdkError(pending.check(), AuthenticationError);
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
