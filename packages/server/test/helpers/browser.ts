import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach } from 'vitest';

/** Debian's chromium: never a downloaded browser. CI installs it (.ci/run). */
export const CHROMIUM = '/usr/bin/chromium';

/** Browser tests are skipped where there is no chromium (`describe.skipIf(!hasChromium)`). */
export const hasChromium: boolean = existsSync(CHROMIUM);

/**
 * A secret in a URL ends up in logs, history and Referers: space keys (64 hex digits), invitation
 * keys, poll and user tokens, JWTs, or any `key`/`token` query parameter. The pages send them as
 * headers only; the human link carries its key in the fragment, which no request includes.
 */
export function secretInUrl(url: string): string | undefined {
  const { pathname, search } = new URL(url);
  const named = [...new URLSearchParams(search).keys()].find((name) => /key|token|secret|jwt/i.test(name));
  if (named) return `a ${named} parameter`;
  const found = `${pathname}${search}`.match(
    /[0-9a-f]{64}|(?:inv|usr|poll)_[\w-]{16,}|eyJ[\w-]{8,}\.[\w-]+/i,
  );
  return found ? `"${found[0].slice(0, 12)}…"` : undefined;
}

export interface BrowserFixture {
  /** The browser, one fresh profile for the enclosing file or `describe`. */
  readonly context: BrowserContext;
  /**
   * What went wrong inside its pages since the test began: uncaught errors, console errors (CSP
   * violations among them), alerts, and any request with a secret in its URL. A test ends with
   * `expect(problems).toEqual([])`.
   */
  problems: string[];
  newPage(): Promise<Page>;
}

/**
 * Chromium for the enclosing file or `describe`: launched in `beforeAll` on a fresh profile,
 * closed in `afterAll`; `problems` is emptied before each test.
 */
export function useBrowser(): BrowserFixture {
  let context: BrowserContext | undefined;
  let profile: string | undefined;
  const problems: string[] = [];

  function watch(page: Page) {
    page.on('request', (request) => {
      const secret = secretInUrl(request.url());
      if (secret) problems.push(`secret in a URL (${secret}): ${request.method()} ${request.url()}`);
    });
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      // The browser logs every API error answer; the tests check those answers themselves.
      if (
        message.type() === 'error' &&
        !/^Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())
      )
        problems.push(`console: ${message.text()}`);
    });
    // An alert can only come from injected script; confirmations are answered by the tests.
    page.on('dialog', (dialog) => {
      if (dialog.type() !== 'alert') return;
      problems.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
  }

  beforeAll(async () => {
    profile = mkdtempSync(join(tmpdir(), 'convene-chromium-'));
    // launchPersistentContext passes the fresh profile as --user-data-dir.
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      viewport: { width: 1280, height: 900 },
    });
    context.on('page', watch);
  }, 60_000);

  beforeEach(() => {
    problems.length = 0;
  });

  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  const running = (): BrowserContext => {
    if (!context) throw new Error('useBrowser: the browser is used before its beforeAll has run');
    return context;
  };
  return {
    get context() {
      return running();
    },
    problems,
    newPage: () => running().newPage(),
  };
}
