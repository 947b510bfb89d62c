import { describe, expect, it } from 'vitest';
import { isSameSitePath } from '../src/routes/web';
import { useServer } from './helpers';

const { srv } = useServer();

/** GET /login?<query> exactly as written, redirects not followed. */
const login = (query: string) => fetch(`${srv.url}/login?${query}`, { redirect: 'manual' });

/**
 * Every way a `next` can name another site, as the query carries it: each must be dropped by a
 * redirect to the bare /login, so the page never takes the browser there after logging in.
 */
const OFF_SITE: [string, string][] = [
  ['a tab after the first slash (browsers drop it: //evil.example)', 'next=/%09/evil.example'],
  ['a newline after the first slash', 'next=/%0A/evil.example'],
  ['a carriage return after the first slash', 'next=/%0D/evil.example'],
  ['a tab between the slashes of //', 'next=/%09%09/evil.example'],
  ['a leading tab before //', 'next=%09//evil.example'],
  ['a leading space before //', 'next=%20//evil.example'],
  ['a leading + (a space) before //', 'next=+//evil.example'],
  ['a protocol-relative URL', 'next=//evil.example'],
  ['a protocol-relative URL, percent-encoded', 'next=%2F%2Fevil.example'],
  ['three slashes', 'next=///evil.example'],
  ['a slash and a backslash', 'next=/%5Cevil.example'],
  ['a slash and a backslash, raw', 'next=/\\evil.example'],
  ['a backslash and a slash', 'next=%5C/evil.example'],
  ['two backslashes', 'next=%5C%5Cevil.example'],
  ['an absolute https URL', `next=${encodeURIComponent('https://evil.example/dashboard')}`],
  ['an absolute URL without slashes', 'next=https:evil.example'],
  ['a javascript: URL', `next=${encodeURIComponent('javascript:alert(document.domain)')}`],
  ['a data: URL', `next=${encodeURIComponent('data:text/html,<script>alert(1)</script>')}`],
  ['a path with a NUL-free control character', 'next=/dashboard%7F'],
  ['an empty next', 'next='],
  ['a safe next beside an unsafe one', 'next=/dashboard&next=//evil.example'],
];

describe('/login?next= only keeps a path on this server (decisions.md)', () => {
  it.each(OFF_SITE)('drops %s with a 303 to the bare /login', async (_label, query) => {
    const res = await login(query);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${srv.url}/login`);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it.each([
    ['the dashboard', 'next=/dashboard'],
    ['the link page with its code', `next=${encodeURIComponent('/link?code=BCDF-GHJK')}`],
    ['a path holding a percent-encoded slash, which stays a path here', 'next=/%252F/evil.example'],
    ['a path holding a percent-encoded tab, which stays a path here', 'next=/%2509/evil.example'],
  ])('serves the page for %s', async (_label, query) => {
    const res = await login(query);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await res.text()).toContain('<form id="login-form"');
  });

  it('serves the page without next', async () => {
    const res = await fetch(`${srv.url}/login`, { redirect: 'manual' });
    expect(res.status).toBe(200);
  });

  it('judges each value as a browser resolves it', () => {
    const origin = 'https://convene.example';
    for (const next of ['/dashboard', '/link?code=BCDF-GHJK', '/space/x#frag', '/%2F/x', '/a/./b'])
      expect(isSameSitePath(next, origin), next).toBe(true);
    for (const next of [
      '/\t/evil.example',
      '/\n/evil.example',
      '/\\evil.example',
      '//evil.example',
      'evil.example',
      '',
    ])
      expect(isSameSitePath(next, origin), JSON.stringify(next)).toBe(false);
    // What a browser makes of the first of those: another site.
    expect(new URL('/\t/evil.example', origin).origin).toBe('https://evil.example');
  });
});
