import { describe, expect, it } from 'vitest';
import { expectError, expectKeyChecks, expectOk, useServer } from './helpers';

const { srv, h } = useServer();

describe('createSpace', () => {
  it('creates an open space and mints a 64-hex owner key', async () => {
    const res = await h.post('/hub/space', {
      body: {
        name: 'Design review',
        description: 'Review the plan',
        agenda: '1. plan',
        privacy: 'private',
        ttl: 3600,
      },
    });
    expectOk(res);
    expect(res.body.spaceId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.ownerId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.ownerPrivateKey).toMatch(/^[0-9a-f]{64}$/);

    const view = await h.get(`/hub/space/${res.body.spaceId}`, { key: res.body.ownerPrivateKey });
    expectOk(view);
    expect(view.body).toMatchObject({
      spaceId: res.body.spaceId,
      name: 'Design review',
      description: 'Review the plan',
      agenda: '1. plan',
      privacy: 'private',
      state: 'open',
      artifacts: [],
      suggestedPollingIntervalMs: 2000,
    });
    expect(view.body.ttlRemaining).toBeGreaterThan(3590);
    expect(view.body.ttlRemaining).toBeLessThanOrEqual(3600);
    expect(view.body.participants).toEqual([
      {
        participantId: res.body.ownerId,
        name: 'Owner',
        role: 'owner',
        avatarUrl: `${srv.url}/avatar/${res.body.ownerId}.svg`,
        status: 'active',
        isOwner: true,
        isHuman: false,
      },
    ]);
  });

  it('defaults privacy to public and ttl to a day', async () => {
    const space = await h.createSpace();
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect(view.body.privacy).toBe('public');
    expect(view.body.ttlRemaining).toBeGreaterThan(86_390);
  });

  it.each([
    [{ description: 'no name' }],
    [{ name: 'no description' }],
    [{ name: '', description: 'empty name' }],
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
    const space = await h.createSpace();
    expectError(await h.get('/hub/space/00000000-0000-4000-8000-000000000000', { key: space.ownerKey }), 404);
    expectError(await h.get('/hub/space/not-a-uuid', { key: space.ownerKey }), 404);
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
