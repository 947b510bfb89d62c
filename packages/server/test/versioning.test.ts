import { FakeClock } from '@convene/core';
import { describe, expect, it } from 'vitest';
import { defaultVersionPolicy, type VersionPolicy, validateVersionPolicy } from '../src/http/versioning';
import { expectError, expectOk, onPostgres, startTestServer, useServer } from './helpers';

describe('API-Version', () => {
  const { h } = useServer();

  it('is 1 on every answer, with no deprecation headers', async () => {
    const space = await h.createSpace();
    for (const res of [
      await h.get('/api/health'),
      await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey }),
      await h.get(`/hub/space/${space.spaceId}`),
      await h.get('/nowhere'),
      await h.get('/.well-known/deprecation-policy'),
    ]) {
      expect(res.headers.get('api-version'), res.text).toBe('1');
      expect(res.headers.get('deprecation')).toBeNull();
      expect(res.headers.get('sunset')).toBeNull();
    }
  });

  it('accepts a request for version 1', async () => {
    const res = await h.post('/hub/space', {
      body: { name: 'v1', description: 'asked for v1' },
      headers: { 'API-Version': '1' },
    });
    expectOk(res);
    expect(res.body.ownerPrivateKey).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each(['2', '0', 'v1', '1.1', ''])(
    'refuses version %j with a JSON 400 before anything runs',
    async (v) => {
      const res = await h.post('/hub/space', {
        body: { name: 'v?', description: 'asked for another version' },
        headers: { 'API-Version': v },
      });
      expectError(res, 400);
      expect(res.body.error).toMatch(/API-Version/);
      expect(res.headers.get('ratelimit-limit')).not.toBeNull();
    },
  );

  it('publishes the deprecation policy from the version table', async () => {
    const res = await h.get('/.well-known/deprecation-policy');
    expectOk(res);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.body).toMatchObject({
      currentVersion: '1',
      versionHeader: 'API-Version',
      supportedVersions: ['1'],
      deprecationWindowDays: 90,
      deprecationHeaders: ['Deprecation', 'Sunset', 'Link'],
      versions: [{ version: '1', status: 'current' }],
    });
    expect(res.body.deprecationWindowDays).toBeGreaterThanOrEqual(90);
  });
});

describe('a deprecated version', () => {
  // Version 0 is deprecated on the day the clock starts and retired 100 days later.
  const clock = new FakeClock('2030-01-01T00:00:00.000Z');
  const policy: VersionPolicy = {
    current: '1',
    deprecationWindowDays: 90,
    versions: [
      {
        version: '0',
        status: 'deprecated',
        deprecatedAt: '2030-01-01T00:00:00Z',
        sunsetAt: '2030-04-11T00:00:00Z',
      },
      { version: '1', status: 'current' },
    ],
  };
  const { srv, h } = useServer({ clock, config: { apiVersions: policy } });

  it('is served with Deprecation, Sunset and a Link to the policy', async () => {
    const res = await h.get('/api/health', { headers: { 'API-Version': '0' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('api-version')).toBe('0');
    expect(res.headers.get('deprecation')).toBe(`@${Date.parse('2030-01-01T00:00:00Z') / 1000}`);
    expect(res.headers.get('sunset')).toBe('Thu, 11 Apr 2030 00:00:00 GMT');
    expect(res.headers.get('link')).toBe(
      `<${srv.url}/.well-known/deprecation-policy>; rel="deprecation"; type="application/json"`,
    );
    // Errors of that version carry them too.
    const error = await h.get('/nowhere', { headers: { 'API-Version': '0' } });
    expect(error.status).toBe(404);
    expect(error.headers.get('sunset')).toBe('Thu, 11 Apr 2030 00:00:00 GMT');
  });

  it('leaves the current version unmarked', async () => {
    for (const headers of [{}, { 'API-Version': '1' }]) {
      const res = await h.get('/api/health', { headers });
      expectOk(res);
      expect(res.headers.get('deprecation')).toBeNull();
      expect(res.headers.get('sunset')).toBeNull();
    }
  });

  it('is listed in the policy, then retired and refused after its sunset', async () => {
    const before = await h.get('/.well-known/deprecation-policy');
    expect(before.body.supportedVersions).toEqual(['1', '0']);
    expect(before.body.versions).toEqual([
      {
        version: '0',
        status: 'deprecated',
        deprecatedAt: '2030-01-01T00:00:00.000Z',
        sunsetAt: '2030-04-11T00:00:00.000Z',
      },
      { version: '1', status: 'current' },
    ]);

    clock.set('2030-04-11T00:00:00.000Z');
    const refused = await h.get('/api/health', { headers: { 'API-Version': '0' } });
    expectError(refused, 400);
    expect(refused.body.error).toMatch(/retired/);
    const after = await h.get('/.well-known/deprecation-policy');
    expect(after.body.supportedVersions).toEqual(['1']);
    expect(after.body.versions[0]).toMatchObject({ version: '0', status: 'retired' });
  });
});

describe('the version table', () => {
  it('is valid as shipped', () => {
    expect(() => validateVersionPolicy(defaultVersionPolicy)).not.toThrow();
  });

  it.each<[string, VersionPolicy]>([
    ['a window under 90 days', { ...defaultVersionPolicy, deprecationWindowDays: 30 }],
    [
      'a sunset inside the window',
      {
        current: '2',
        deprecationWindowDays: 90,
        versions: [
          { version: '1', status: 'deprecated', deprecatedAt: '2030-01-01', sunsetAt: '2030-03-01' },
          { version: '2', status: 'current' },
        ],
      },
    ],
    [
      'no dates on a deprecated version',
      {
        current: '2',
        deprecationWindowDays: 90,
        versions: [
          { version: '1', status: 'deprecated' },
          { version: '2', status: 'current' },
        ],
      },
    ],
    [
      'a current version missing from the table',
      { current: '2', deprecationWindowDays: 90, versions: [{ version: '1', status: 'current' }] },
    ],
  ])('refuses %s', (_label, policy) => {
    expect(() => validateVersionPolicy(policy)).toThrow(/invalid API version policy/);
  });

  // PGlite only: on PostgreSQL the test database of a server that never started is not dropped.
  it.skipIf(onPostgres())('stops a server from starting with a broken table', async () => {
    await expect(
      startTestServer({ config: { apiVersions: { ...defaultVersionPolicy, deprecationWindowDays: 10 } } }),
    ).rejects.toThrow(/deprecation window/);
  });
});
