import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectError, useServer } from './helpers';

const { srv, h: api } = useServer();

/** Asserts an HTML page with the strict CSP and the frame every page shares. */
async function expectPage(path: string, status = 200): Promise<string> {
  const res = await api.get(path);
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
  const csp = res.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).not.toContain('unsafe-eval');
  expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  expect(res.headers.get('api-version')).toBe('1');
  expect(res.text).toMatch(/^<!doctype html>\n<html lang="en">/);
  expect(res.text).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
  expect(res.text).toMatch(/<link rel="stylesheet" href="\/web\/style\.css\?v=[\w-]{16}">/);
  expect(res.text).toMatch(/<header class="site-header">\s*<nav aria-label="Main">/);
  expect(res.text).toContain('<main id="main"');
  expect(res.text).toContain('<footer');
  expect(res.text).toMatch(/<h1[ >]/);
  // No inline script or style: the CSP would refuse them.
  expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  expect(res.text).not.toMatch(/\sstyle=|<style|\son[a-z]+=/i);
  return res.text;
}

describe('pages', () => {
  it('/ says what Convene is and has the create-space form', async () => {
    const html = await expectPage('/');
    expect(html).toMatch(/<script type="module" src="\/web\/home\.js\?v=[\w-]{16}"><\/script>/);
    expect(html).toContain('<form id="create-space"');
    expect(html).toContain('name="description"');
    expect(html).toContain('id="owner-key"');
    expect(html).toContain('id="human-link"');
  });

  it('/ points an agent at /llms.txt and /openapi.json, in a Link header and in its head, with absolute URLs', async () => {
    const res = await api.get('/', { headers: { Accept: 'text/markdown, application/json' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('link')).toBe(
      `<${srv.url}/llms.txt>; rel="describedby"; type="text/plain", <${srv.url}/openapi.json>; rel="service-desc"; type="application/json"`,
    );
    const head = res.text.slice(0, res.text.indexOf('</head>'));
    expect(head).toContain(`<link rel="describedby" href="${srv.url}/llms.txt" type="text/plain">`);
    expect(head).toContain(
      `<link rel="service-desc" href="${srv.url}/openapi.json" type="application/json">`,
    );
    // Both lead somewhere.
    expect((await api.get('/llms.txt')).status).toBe(200);
    expect((await api.get('/openapi.json')).status).toBe(200);
  });

  it('/join/{spaceId} has the join form and the waiting panel', async () => {
    const spaceId = randomUUID();
    const html = await expectPage(`/join/${spaceId}`);
    expect(html).toMatch(/src="\/web\/join\.js\?v=[\w-]{16}"/);
    expect(html).toContain(`data-space-id="${spaceId}"`);
    expect(html).toContain('<form id="join-form"');
    expect(html).toContain('id="waiting"');
  });

  it('/space/{spaceId} has the messages, the send form, participants and documents', async () => {
    const spaceId = randomUUID();
    const html = await expectPage(`/space/${spaceId}`);
    expect(html).toMatch(/src="\/web\/space\.js\?v=[\w-]{16}"/);
    expect(html).toContain('<ol id="messages"');
    expect(html).toContain('<form id="send-form"');
    expect(html).toContain('<ul id="participants"');
    expect(html).toContain('<ul id="artifacts"');
    expect(html).toContain('id="artifact-editor"');
    expect(html).toContain('<aside class="side" aria-label="Space details">');
  });

  it('/login has the login and signup forms', async () => {
    const html = await expectPage('/login');
    expect(html).toContain('<form id="login-form"');
    expect(html).toContain('<form id="signup-form"');
    expect(html).toContain('autocomplete="current-password"');
  });

  it('/link has the code form and the approve and refuse buttons', async () => {
    const html = await expectPage('/link?code=BCDF-GHJK');
    expect(html).toContain('<form id="link-form"');
    expect(html).toContain('id="link-approve"');
    expect(html).toContain('id="link-deny"');
  });

  it('/dashboard has the spaces and tokens sections', async () => {
    const html = await expectPage('/dashboard');
    expect(html).toContain('<table id="spaces"');
    expect(html).toContain('<table id="tokens"');
    expect(html).toContain('<form id="token-form"');
  });

  it('renders the space and join pages for any UUID (the API answers whether a space has it)', async () => {
    await expectPage(`/space/${randomUUID()}`);
    await expectPage(`/join/${randomUUID()}`);
  });

  it('answers 404 for a page whose id is no UUID: JSON, as every 4xx, in words a human reads', async () => {
    // decisions.md: a path id that is not a UUID names nothing; the specification: never HTML.
    const ids = ['not-a-uuid', '"><script>alert(1)</script>', '$&$\'$`" x=1'];
    for (const page of ['join', 'space'])
      for (const id of ids) {
        const res = await api.get(`/${page}/${encodeURIComponent(id)}`);
        expectError(res, 404);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        expect(res.body).toEqual({
          error:
            'No space has this address. Check the link you were given: a space’s address ends with its id.',
          code: 'not_found',
        });
      }
    // A UUID in another case is still one.
    await expectPage(`/join/${randomUUID().toUpperCase()}`);
  });

  it('answers HEAD like GET, without a body', async () => {
    const res = await fetch(`${srv.url}/dashboard`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await res.text()).toBe('');
  });

  it('keys never travel in a page URL: the human link carries the invitation key in the fragment', async () => {
    const create = await api.post('/hub/space', { body: { name: 'Web', description: 'pages' } });
    const invite = await api.post(`/hub/space/${create.body.spaceId}/invite`, {
      key: create.body.ownerPrivateKey,
    });
    const link = new URL(invite.body.humanLink);
    expect(link.pathname).toBe(`/join/${create.body.spaceId}`);
    expect(link.search).toBe('');
    expect(link.hash).toBe(`#key=${encodeURIComponent(invite.body.publicInvitationKey)}`);
    await expectPage(link.pathname);
  });
});

/** The scripts a page loads: its own module and every chunk it imports, transitively. */
async function scriptsOf(page: string): Promise<Map<string, string>> {
  const html = await expectPage(page);
  const entry = /<script type="module" src="\/web\/([a-z]+\.js)\?v=[\w-]+"><\/script>/.exec(html)?.[1];
  expect(entry, html).toBeDefined();
  const scripts = new Map<string, string>();
  const load = async (file: string) => {
    if (scripts.has(file)) return;
    const res = await api.get(`/web/${file}`);
    expect(res.status, file).toBe(200);
    scripts.set(file, res.text);
    for (const [, chunk] of res.text.matchAll(/from\s*"\.\/(chunk-[A-Z0-9]+\.js)"/g)) await load(chunk!);
  };
  await load(entry!);
  return scripts;
}

const SOME_ID = '00000000-0000-4000-8000-000000000000';
const PAGES = ['/', `/join/${SOME_ID}`, `/space/${SOME_ID}`, '/login', '/link', '/dashboard'];

describe('assets', () => {
  it.each([
    ['style.css', 'text/css; charset=utf-8'],
    ['icon.svg', 'image/svg+xml'],
    ['home.js', 'text/javascript; charset=utf-8'],
    ['join.js', 'text/javascript; charset=utf-8'],
    ['space.js', 'text/javascript; charset=utf-8'],
    ['login.js', 'text/javascript; charset=utf-8'],
    ['link.js', 'text/javascript; charset=utf-8'],
    ['dashboard.js', 'text/javascript; charset=utf-8'],
  ])('serves /web/%s as %s', async (file, type) => {
    const res = await api.get(`/web/${file}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(type);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.text.length).toBeGreaterThan(100);
  });

  it.each(PAGES)('serves every script %s loads, shared chunks cached for good', async (page) => {
    const scripts = await scriptsOf(page);
    for (const [file, code] of scripts) {
      expect(code, file).not.toContain('sourceMappingURL');
      const res = await api.get(`/web/${file}`);
      expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      if (file.startsWith('chunk-'))
        expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    }
  });

  it('bundles DOMPurify, with its licence, into the space page only', async () => {
    const space = [...(await scriptsOf(`/space/${SOME_ID}`)).values()].join('\n');
    expect(space).toMatch(/@license DOMPurify 3\./);
    for (const page of PAGES.filter((p) => !p.startsWith('/space/'))) {
      const code = [...(await scriptsOf(page)).values()].join('\n');
      expect(code, page).not.toMatch(/DOMPurify/);
    }
  });

  it('never inserts markup: no script but the one carrying DOMPurify uses innerHTML and the like', async () => {
    for (const page of PAGES.filter((p) => !p.startsWith('/space/'))) {
      for (const [file, code] of await scriptsOf(page))
        expect(code, file).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
    }
  });

  it('no hand-written API client is left: every page reaches the API through @convene/sdk', async () => {
    for (const page of PAGES) {
      const code = [...(await scriptsOf(page)).values()].join('\n');
      // The SDK's marks: the API-Version header it sends (by its lower-case name) and the error
      // classes it throws.
      expect(code, page).toContain('"api-version"');
      expect(code, page).toContain('ConveneError');
    }
    expect((await api.get('/web/api.js')).status).toBe(404);
  });

  it.each(PAGES)(
    'has %s name each file by its content version, kept a year; the bare name or another version is revalidated',
    async (page) => {
      const html = await expectPage(page);
      const named = [...html.matchAll(/"\/web\/([^"?]+)\?v=([^"]+)"/g)];
      // Its script, the stylesheet and the icon (in the head and in the header).
      expect(named.map(([, file]) => file).sort()).toEqual(
        [/<script[^>]*src="\/web\/([a-z]+\.js)/.exec(html)![1], 'icon.svg', 'icon.svg', 'style.css'].sort(),
      );
      expect(html).not.toMatch(/"\/web\/[^"?]+"/);
      for (const [, file, version] of named) {
        const res = await api.get(`/web/${file}?v=${version}`);
        expect(res.status, file).toBe(200);
        expect(res.headers.get('cache-control'), file).toBe('public, max-age=31536000, immutable');
        expect(res.headers.get('etag')).toBe(`"${version}"`);
        // The version names these bytes: a page of another build (a rolling upgrade) or the bare
        // name gets them revalidated, never kept under a URL that names others.
        for (const other of [`/web/${file}`, `/web/${file}?v=AAAAAAAAAAAAAAAA`, `/web/${file}?v=`]) {
          const revalidated = await api.get(other);
          expect(revalidated.status, other).toBe(200);
          expect(revalidated.headers.get('cache-control'), other).toBe('no-cache');
          expect(revalidated.text).toBe(res.text);
        }
      }
    },
  );

  it('answers 304 to a browser that has the asset already', async () => {
    const first = await api.get('/web/style.css');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{16}"$/);
    const again = await api.get('/web/style.css', { headers: { 'If-None-Match': etag! } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    const stale = await api.get('/web/style.css', { headers: { 'If-None-Match': '"something-else"' } });
    expect(stale.status).toBe(200);
    expect(stale.text).toBe(first.text);
  });

  it.each([
    '../pages.ts',
    'nope.js',
    '..%2Fpages.ts',
    'style.css.map',
    'chunk-NOPE.js',
    '..%2Fpages%2Fhome.html',
  ])('answers a JSON 404 for /web/%s', async (file) => {
    const res = await api.get(`/web/${file}`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(typeof res.body.error).toBe('string');
  });
});

describe('without a build of the pages', () => {
  const { h } = useServer({ config: { webDir: join(tmpdir(), `convene-no-web-${randomUUID()}`) } });

  it.each(['/', `/space/${randomUUID()}`, '/web/home.js'])(
    '%s answers a JSON 503 saying so',
    async (path) => {
      const res = await h.get(path);
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      expect(res.body.error).toMatch(/not built/);
      if (path === '/')
        expect(res.headers.get('link')).toMatch(/^<http:\/\/[^>]+\/llms\.txt>; rel="describedby"/);
    },
  );

  it('the API works all the same', async () => {
    const res = await h.post('/hub/space', { body: { name: 'No pages', description: 'API only' } });
    expect(res.status).toBe(200);
  });
});
