// The SDK in a real browser (Debian's chromium, never a downloaded one): the minified bundle the
// size script measures, loaded as an ES module by a page on the server's origin, drives the
// service with the browser's own fetch, streams and crypto.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureBundle } from '../scripts/size';
import { serverUrl } from './helpers';
import { postgresUrl } from './helpers/server';

const CHROMIUM = '/usr/bin/chromium';

// What happens in a browser does not depend on the database: once, on PGlite.
describe.skipIf(!existsSync(CHROMIUM) || Boolean(postgresUrl()))('the SDK in a browser', () => {
  let context: BrowserContext;
  let profile: string;

  beforeAll(async () => {
    profile = mkdtempSync(join(tmpdir(), 'convene-sdk-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('creates, joins, sends, streams, edits under a lock and types its errors', async () => {
    const { code } = await measureBundle();
    const origin = serverUrl();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    // Two paths of the server's origin are the test's own page and the bundle; everything else
    // (the API) reaches the server.
    await page.route(`${origin}/__sdk__/**`, (route) => {
      const url = route.request().url();
      if (url.endsWith('/sdk.js')) return route.fulfill({ contentType: 'text/javascript', body: code });
      return route.fulfill({
        contentType: 'text/html',
        body: '<!doctype html><script type="module">import * as sdk from "./sdk.js"; window.sdk = sdk;</script>',
      });
    });
    await page.goto(`${origin}/__sdk__/page.html`);
    await page.waitForFunction(() => 'sdk' in window);

    const result = await page.evaluate(async (baseUrl) => {
      const { Convene, LockedError } = (window as unknown as { sdk: typeof import('../src') }).sdk;
      const hub = new Convene({ baseUrl, logLevel: 'off' });
      const space = await hub.spaces.create({ name: 'In a browser', description: 'chromium' });
      const owner = hub.space(space.spaceId, space.ownerPrivateKey);
      const invitation = await owner.invitations.create();
      // The page's own fetch passed in, as the README's options show: the joiner's calls and its
      // stream go through it (called as a method of anything but the window, it throws).
      const given = new Convene({ baseUrl, fetch: window.fetch, logLevel: 'off' });
      const me = await given.join(invitation.humanLink, { name: 'Browser', isHuman: true });

      const controller = new AbortController();
      const streamed: string[] = [];
      const reading = (async () => {
        for await (const event of me.messages.stream({ signal: controller.signal })) {
          if (event.event === 'context') await owner.messages.send('live from the owner');
          if (event.event === 'message') {
            streamed.push(event.data.content);
            if (streamed.length === 2) controller.abort();
          }
        }
      })();
      await me.messages.send('sent from a page');
      await reading;

      const doc = await me.artifacts.create({ name: 'notes', content: 'a' });
      await me.artifacts.withLock(doc.id, (locked) => locked.write(`${locked.content}b`));
      await owner.artifacts.lock(doc.id);
      const refused = await me.artifacts.lock(doc.id).catch((error: unknown) => error);
      return {
        streamed: streamed.sort(),
        content: (await owner.artifacts.get(doc.id)).content,
        lockedError: refused instanceof LockedError,
        lockedBy: (refused as { lockedBy?: string }).lockedBy === space.ownerId,
      };
    }, origin);

    expect(problems).toEqual([]);
    expect(result).toEqual({
      streamed: ['live from the owner', 'sent from a page'],
      content: 'ab',
      lockedError: true,
      lockedBy: true,
    });
  }, 90_000);
});
