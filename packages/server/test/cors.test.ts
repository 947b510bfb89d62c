import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/env';
import { type ApiResponse, expectError, expectOk, useServer } from './helpers';
import { SseStream } from './helpers/sse';

const APP = 'https://app.example.com';
const OTHER = 'https://evil.example.net';

/** A browser's preflight before a write with the SDK's headers. */
const preflight = (
  h: { request: (m: string, p: string, o: object) => Promise<ApiResponse> },
  origin: string,
) =>
  h.request('OPTIONS', '/hub/space', {
    headers: {
      Origin: origin,
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'content-type,x-private-key,idempotency-key,api-version',
    },
  });

const exposed = (response: ApiResponse) =>
  (response.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/\s*,\s*/);

describe('CORS for the origins of CORS_ORIGINS', () => {
  const { srv, h } = useServer({ config: { corsOrigins: [APP] } });

  it('answers a preflight from a listed origin, for the methods and headers the SDK sends', async () => {
    const answer = await preflight(h, APP);
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe(APP);
    expect(answer.headers.get('access-control-allow-methods')).toContain('POST');
    expect(answer.headers.get('access-control-allow-headers')).toBe(
      'content-type,x-private-key,idempotency-key,api-version',
    );
    expect(answer.headers.get('access-control-max-age')).toBe('600');
    // Keys and tokens are headers the page sets: no cookie, so credentials are never allowed.
    expect(answer.headers.get('access-control-allow-credentials')).toBeNull();
    expect(answer.headers.get('vary')).toMatch(/origin/i);
  });

  it('lets the page read answers, errors and the headers the SDK reads', async () => {
    const created = await h.post('/hub/space', {
      body: { name: 'From a page', description: 'cors' },
      headers: { Origin: APP },
    });
    expectOk(created);
    expect(created.headers.get('access-control-allow-origin')).toBe(APP);
    for (const header of [
      'request-id',
      'ratelimit-remaining',
      'retry-after',
      'idempotency-replayed',
      'api-version',
    ])
      expect(exposed(created)).toContain(header);
    // An error is readable too (the SDK's error classes need its status and body).
    const refused = await h.get(`/hub/space/${created.body.spaceId}`, {
      key: 'f'.repeat(64),
      headers: { Origin: APP },
    });
    expectError(refused, 401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(APP);
  });

  it('carries it on the event stream, whose answer is written by hand', async () => {
    const space = await h.createSpace();
    const stream = await SseStream.connect(srv.listenUrl, space.spaceId, {
      key: space.ownerKey,
      headers: { Origin: APP },
    });
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers.get('access-control-allow-origin')).toBe(APP);
      expect(exposed(stream as unknown as ApiResponse)).toContain('request-id');
    } finally {
      stream.close();
    }
  });

  it('allows no other origin', async () => {
    const answer = await preflight(h, OTHER);
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    const read = await h.get('/api/health', { headers: { Origin: OTHER } });
    expectOk(read);
    expect(read.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('CORS_ORIGINS=*', () => {
  const { h } = useServer({ config: { corsOrigins: ['*'] } });

  it('lets any origin call, without credentials', async () => {
    const answer = await preflight(h, OTHER);
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    const read = await h.get('/api/health', { headers: { Origin: OTHER } });
    expect(read.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('without CORS_ORIGINS (the default)', () => {
  const { h } = useServer();

  it('sends no CORS header, and a preflight finds no route', async () => {
    const answer = await preflight(h, APP);
    expectError(answer, 404);
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    const read = await h.get('/api/health', { headers: { Origin: APP } });
    expect(read.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('the CORS_ORIGINS setting', () => {
  it('takes origins, comma-separated, and * for any', () => {
    expect(loadConfig({ CORS_ORIGINS: ` ${APP}, http://localhost:5173 ` }).corsOrigins).toEqual([
      APP,
      'http://localhost:5173',
    ]);
    expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).toEqual(['*']);
    expect(loadConfig({}).corsOrigins).toEqual([]);
  });

  it('refuses what no browser sends as an Origin: a path, a trailing slash, another scheme', () => {
    for (const value of [`${APP}/app`, `${APP}/`, 'app.example.com', 'ftp://app.example.com'])
      expect(() => loadConfig({ CORS_ORIGINS: value }), value).toThrow(/CORS_ORIGINS/);
  });
});
