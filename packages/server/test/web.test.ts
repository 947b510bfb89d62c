import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useServer } from './helpers';

const { srv, h: api } = useServer();

/** Asserts an HTML page with the strict CSP and the frame every page shares. */
async function expectPage(path: string): Promise<string> {
  const res = await api.get(path);
  expect(res.status, res.text).toBe(200);
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
  expect(res.text).toContain('<link rel="stylesheet" href="/web/style.css">');
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
    expect(html).toContain('<script type="module" src="/web/home.js"></script>');
    expect(html).toContain('<form id="create-space"');
    expect(html).toContain('name="description"');
    expect(html).toContain('id="owner-key"');
    expect(html).toContain('id="human-link"');
  });

  it('/join/{spaceId} has the join form and the waiting panel', async () => {
    const spaceId = randomUUID();
    const html = await expectPage(`/join/${spaceId}`);
    expect(html).toContain('src="/web/join.js"');
    expect(html).toContain(`data-space-id="${spaceId}"`);
    expect(html).toContain('<form id="join-form"');
    expect(html).toContain('id="waiting"');
  });

  it('/space/{spaceId} has the messages, the send form, participants and documents', async () => {
    const spaceId = randomUUID();
    const html = await expectPage(`/space/${spaceId}`);
    expect(html).toContain('src="/web/space.js"');
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

  it('renders the space and join pages for ids that name no space (the API answers the error)', async () => {
    await expectPage('/space/not-a-uuid');
    await expectPage(`/join/${randomUUID()}`);
  });

  it('escapes whatever the path holds', async () => {
    const html = await expectPage(`/space/${encodeURIComponent('"><script>alert(1)</script>')}`);
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).toContain('data-space-id="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
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

describe('assets', () => {
  it.each([
    ['style.css', 'text/css; charset=utf-8'],
    ['icon.svg', 'image/svg+xml'],
    ['api.js', 'text/javascript; charset=utf-8'],
    ['ui.js', 'text/javascript; charset=utf-8'],
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
    expect(res.text.length).toBeGreaterThan(100);
  });

  it("serves DOMPurify's ES module build from node_modules", async () => {
    const res = await api.get('/web/purify.js');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.text).toMatch(/@license DOMPurify 3\./);
    expect(res.text).toContain('export { purify_default as default }');
    expect(res.text).not.toContain('sourceMappingURL');
  });

  it('never inserts user data as markup: innerHTML is not used by any page module', async () => {
    for (const file of ['ui.js', 'home.js', 'join.js', 'space.js', 'login.js', 'link.js', 'dashboard.js']) {
      const res = await api.get(`/web/${file}`);
      expect(res.text, file).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
    }
  });

  it.each(['../pages.ts', 'nope.js', '..%2Fpages.ts', 'style.css.map'])(
    'answers a JSON 404 for /web/%s',
    async (file) => {
      const res = await api.get(`/web/${file}`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      expect(typeof res.body.error).toBe('string');
    },
  );
});
