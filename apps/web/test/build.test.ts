import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWebBuild, type WebBuild as ServedBuild } from '../index';
import { buildWeb, type WebBuild } from '../scripts/build';
import { PAGE_NAMES } from '../src/shell/html';

const src = fileURLToPath(new URL('../src/', import.meta.url));

/** Every TypeScript source of the pages, with its path under src/. */
function sources(dir = src): { path: string; code: string }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts')
      ? [{ path: relative(src, path), code: readFileSync(path, 'utf8') }]
      : [];
  });
}

describe('the build', () => {
  let outDir: string;
  let build: WebBuild;
  let served: ServedBuild;

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), 'convene-web-'));
    build = await buildWeb(outDir);
    const read = readWebBuild(outDir);
    if (!read) throw new Error('the build could not be read back');
    served = read;
  });
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it('has a shell and a script for every page, and each shell loads only its own script', () => {
    for (const page of PAGE_NAMES) {
      const html = served.pages[page];
      expect(html).toMatch(/^<!doctype html>/);
      const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map(([tag]) => tag);
      expect(scripts).toEqual([
        `<script type="module" src="/web/${page}.js?v=${served.assets.get(`${page}.js`)?.version}">`,
      ]);
      expect(served.assets.get(`${page}.js`)?.contentType).toBe('text/javascript; charset=utf-8');
    }
    expect([...served.assets.keys()].sort()).toEqual(build.assets);
  });

  it('puts nothing in a shell that the CSP would refuse: no inline script, style or handler', () => {
    for (const page of PAGE_NAMES) {
      const html = served.pages[page];
      expect(html, page).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(html, page).not.toMatch(/\sstyle=|<style|\son[a-z]+=/i);
      // Every file a shell names is in the build, named by its content version.
      const named = [...html.matchAll(/"\/web\/([^"?]+)(?:\?v=([^"]*))?"/g)];
      expect(named.length, page).toBeGreaterThanOrEqual(3);
      for (const [, file, version] of named) {
        expect(served.assets.has(file!), file).toBe(true);
        expect(version, `${page}: ${file}`).toBe(served.assets.get(file!)?.version);
      }
    }
  });

  it('marks only the content-named chunks as immutable, and every import of a script resolves', () => {
    for (const [name, asset] of served.assets) {
      expect(asset.immutable, name).toBe(/^chunk-[A-Z0-9]+\.js$/.test(name));
      if (!name.endsWith('.js')) continue;
      const code = asset.body.toString('utf8');
      for (const [, imported] of code.matchAll(/from\s*"\.\/([^"]+)"/g))
        expect(served.assets.has(imported!), `${name} imports ${imported}`).toBe(true);
      expect(code, name).not.toContain('sourceMappingURL');
    }
  });

  it('keeps the pages light: what each page loads, gzipped', () => {
    // The join page carries the SDK's join flow (PendingJoin, its polls and outage hooks) beside
    // the client every page shares. The shared client grew by about 0.2 kB in session 21 (a
    // ConnectionError says whether the request may have run, request options among parameters
    // are refused): the dashboard went to 15.2 kB, the join page to 15.8 kB. It grew by 1.1 kB in
    // session 23 (withLock's persistent release and UnlockError, the loops' `ended`): the
    // dashboard went to 16.5 kB, the join page to 17.1 kB, the space page to 35.2 kB. The space page
    // grew by 1.4 kB in session 24, to 36.6 kB, with what a human's trial asked of it (following the end
    // of the list and what came below, the length of a message, bidi controls written out, the
    // composer closed while muted, the lock let go by an idle editor, keeping access to the space).
    // The shared client grew by 0.6 kB in session 25 (every error's code and the loops' ended from
    // it, the loops' reconnection policy, participants.reject, AbortErrors naming the waits): the
    // dashboard went to 17.6 kB, the join page to 18.3 kB, the space page to 37.5 kB. The space page
    // grew by 0.7 kB in session 30, to 38.3 kB, with what a second human's trial asked of it (a
    // draft kept when the space ends, versions that follow, names in use refused, why a key no
    // longer opens the space, said as that fact); the dashboard by 0.5 kB, to 18.2 kB (that sentence
    // of why, which every page's errors share, and a token name in use refused).
    // The shared client grew by 0.1 kB in session 35 (a list that asks only when read, no
    // Idempotency-Key on writes never replayed, codes on the SDK's own lock refusals): the link
    // page went to 18.05 kB, past the 18 kB the smaller pages had; they may load 18.5 kB.
    // The shared client grew by 0.35 kB in session 36 (withLock releases a lock whose answer was
    // lost, after looking that it is its own): the join page went to 19.3 kB, past its 19 kB; the
    // link page to 18.4 kB and the space page to 38.9 kB, at their edges. Each may load 0.5 kB more.
    // Then by 0.3 kB (withLock and lock wait for a lock someone else holds, `waitMs`): the join page
    // went to 19.6 kB, past its 19.5; it and the dashboard may load 20 kB.
    // The space page grew by 0.6 kB in session 50, to 39.5 kB (40,446 bytes), with what a third
    // human's trial asked of it (join requests said at the top, a pasted link taken for its key,
    // the way to log in and back, an emptied html message said, locks dropped with the space,
    // versions named on their buttons, quoted names in a diff's header read): it may load 40 kB.
    // It grew by 0.6 kB, to 40.5 kB, with what session 63's trial asked of it (a message that
    // mentions the reader marked, what a reply answers quoted, Reply above the composer): it may
    // load 41 kB. It went to 41.1 kB (42,117 bytes) in session 73 with where a keyboard and screen
    // reader trial lost the focus (a row's buttons gone, Close, Remember, a refused lock said free
    // once released, the message box focused only in view): it may load 41.5 kB.
    const budgets: Record<string, number> = { space: 41.5 * 1024, join: 20 * 1024, dashboard: 20 * 1024 };
    for (const { page, gzipBytes } of build.pages)
      expect(gzipBytes, `${page}: ${gzipBytes} bytes`).toBeLessThan(budgets[page] ?? 19 * 1024);
  });
});

describe('the sources', () => {
  it('never insert markup: html reaches the page only through DOMPurify (lib/content.ts)', () => {
    for (const { path, code } of sources())
      expect(code, path).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|DOMParser/);
    const sanitisers = sources().filter(({ code }) => /from 'dompurify'/.test(code));
    expect(sanitisers.map(({ path }) => path)).toEqual(['lib/content.ts']);
  });

  it('reach the service only through @convene/sdk: no fetch of their own, no EventSource, no XMLHttpRequest', () => {
    for (const { path, code } of sources()) {
      // The one use of fetch allowed is as the SDK's `fetch` option, wrapping the browser's.
      const rest = code.replace(/fetch: (?:async )?\(input, init\) =>[\s\S]*?fetch\(input, /g, '');
      expect(rest, path).not.toMatch(/\bfetch\(|EventSource|XMLHttpRequest|sendBeacon/);
    }
  });

  it('keep keys out of addresses: no page writes a key into a URL or a query', () => {
    for (const { path, code } of sources())
      expect(code, path).not.toMatch(/[?&]key=|searchParams\.set\(['"]key/);
  });
});
