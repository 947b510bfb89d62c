import { NotFoundError } from '@convene/sdk';
import { describe, expect, it } from 'vitest';
import { expectAnswer, expectError, expectKeyChecks, expectOk, sdkError, useServer } from './helpers';

/**
 * Spaces as the SDK creates and reads them; what the SDK never sends (bodies that break the
 * contract, missing or wrong keys) is checked over raw HTTP.
 */
const { srv, h, sdk } = useServer();

describe('createSpace', () => {
  it('creates an open space and mints a 64-hex owner key', async () => {
    const hub = sdk.hub();
    const res = await hub.spaces
      .create({
        name: 'Design review',
        description: 'Review the plan',
        agenda: '1. plan',
        privacy: 'private',
        ttl: 3600,
      })
      .withResponse();
    expectAnswer(res);
    expect(res.data.spaceId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.data.ownerId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.data.ownerPrivateKey).toMatch(/^[0-9a-f]{64}$/);

    const view = await hub.space(res.data.spaceId, res.data.ownerPrivateKey).get().withResponse();
    expectAnswer(view);
    expect(view.data).toMatchObject({
      spaceId: res.data.spaceId,
      name: 'Design review',
      description: 'Review the plan',
      agenda: '1. plan',
      privacy: 'private',
      state: 'open',
      artifacts: [],
      suggestedPollingIntervalMs: 2000,
    });
    expect(view.data.ttlRemaining).toBeGreaterThan(3590);
    expect(view.data.ttlRemaining).toBeLessThanOrEqual(3600);
    expect(view.data.participants).toEqual([
      {
        participantId: res.data.ownerId,
        name: 'Owner',
        role: 'owner',
        avatarUrl: `${srv.url}/avatar/${res.data.ownerId}.svg`,
        status: 'active',
        isOwner: true,
        isHuman: false,
        lastSeenAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        lastReadSeq: 0,
      },
    ]);
  });

  it('defaults privacy to public and ttl to a day', async () => {
    const { owner } = await sdk.createSpace();
    const view = await owner.get();
    expect(view.privacy).toBe('public');
    expect(view.ttlRemaining).toBeGreaterThan(86_390);
  });

  it.each([
    [{ description: 'no name' }],
    [{ name: 'no description' }],
    [{ name: '', description: 'empty name' }],
    [{ name: '   ', description: 'blank name' }],
    [{ name: 'x'.repeat(201), description: 'long name' }],
    [{ name: 'n', description: 'd', ttl: 0 }],
    [{ name: 'n', description: 'd', ttl: 2_592_001 }],
    [{ name: 'n', description: 'd', ttl: 1.5 }],
    [{ name: 'n', description: 'd', privacy: 'secret' }],
    [{ name: 'n', description: 'x'.repeat(10_001) }],
    // JSON bodies are not coerced: a string is not a boolean or a number.
    [{ name: 'n', description: 'd', isHuman: 'false' }],
    [{ name: 'n', description: 'd', ttl: '90' }],
  ])('rejects %j with 400', async (body) => {
    expectError(await h.post('/hub/space', { body }), 400);
  });

  it('rejects malformed JSON with a JSON 400', async () => {
    expectError(await h.post('/hub/space', { body: '{"name":', raw: true }), 400);
  });
});

describe('getSpace', () => {
  it('answers 404 for an unknown or non-UUID space id', async () => {
    const { ownerKey } = await sdk.createSpace();
    await sdkError(sdk.space('00000000-0000-4000-8000-000000000000', ownerKey).get(), NotFoundError);
    await sdkError(sdk.space('not-a-uuid', ownerKey).get(), NotFoundError);
  });

  it('says whose key was presented (you): the owner, a participant with their id and status, an invitation', async () => {
    const space = await h.createSpace();
    const member = await h.joinActive(space);
    const invitation = await h.invite(space);
    const as = async (key: string) => {
      const res = await h.get(`/hub/space/${space.spaceId}`, { key });
      expectOk(res);
      return res.body.you;
    };
    expect(await as(space.ownerKey)).toEqual({
      role: 'owner',
      participantId: space.ownerId,
      status: 'active',
    });
    expect(await as(member.key)).toEqual({
      role: 'participant',
      participantId: member.participantId,
      status: 'active',
    });
    expect(await as(invitation)).toEqual({ role: 'invitation' });
    // A muted participant learns it from the space itself, not by finding itself in participants.
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${member.participantId}/mute`, {
        key: space.ownerKey,
      }),
    );
    expect(await as(member.key)).toMatchObject({ status: 'muted' });
  });

  it('refuses missing and unknown keys, and keys of another space', async () => {
    const space = await h.createSpace();
    const other = await h.createSpace();
    await expectKeyChecks(h, {
      method: 'GET',
      path: `/hub/space/${space.spaceId}`,
      wrongKeys: { 'other space owner': other.ownerKey },
    });
  });
});
