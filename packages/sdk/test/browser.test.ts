// The SDK in a real browser (Debian's chromium, never a downloaded one): the minified bundle the
// size script measures, loaded as an ES module by a page on the server's origin, drives the
// service with the browser's own fetch, streams and crypto.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, type CDPSession, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureBundle } from '../scripts/size';
import { serverUrl } from './helpers';

const CHROMIUM = '/usr/bin/chromium';

describe.skipIf(!existsSync(CHROMIUM))('the SDK in a browser', () => {
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

  /** A page of the server's origin that has loaded the bundle as `window.sdk`. */
  async function sdkPage(problems: string[]): Promise<Page> {
    const { code } = await measureBundle();
    const origin = serverUrl();
    const page = await context.newPage();
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
    return page;
  }

  it('creates, joins, sends, streams, edits under a lock and types its errors', async () => {
    const origin = serverUrl();
    const problems: string[] = [];
    const page = await sdkPage(problems);

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

  it('shows no key, token or header in the console: what devtools lists of each object, expanded', async () => {
    const problems: string[] = [];
    const page = await sdkPage(problems);
    const secrets = {
      'space key': 'key-of-the-space-f1e2',
      'user token': 'usr_token-of-the-human-a9b8',
      header: 'header-value-c7d6',
      JWT: 'jwt-of-the-session-e5f4',
      'invitation key': 'invitation-key-b3a2',
      'poll token': 'poll-token-d1c0',
    };
    await page.evaluate(
      ({ baseUrl, secrets }) => {
        const { Convene } = (window as unknown as { sdk: typeof import('../src') }).sdk;
        const hub = new Convene({
          baseUrl,
          userToken: secrets['user token'],
          headers: { 'X-Test-Secret': secrets.header },
          logLevel: 'off',
        });
        const space = hub.space('space-id', secrets['space key'], 'participant-id');
        const logged: Record<string, unknown> = {
          client: hub,
          'client withOptions': hub.withOptions({ maxRetries: 1 }),
          'space client': space,
          messages: space.messages,
          inbox: space.inbox,
          webhooks: space.webhooks,
          artifacts: space.artifacts,
          stream: space.messages.stream(),
          session: hub.session(secrets.JWT),
          'pending join': hub.pendingJoin({
            spaceId: 'space-id',
            participantId: 'participant-id',
            invitationKey: secrets['invitation key'],
            pollToken: secrets['poll token'],
          }),
        };
        (window as unknown as { logged: unknown }).logged = logged;
        // What the README promises stays readable where it is needed.
        if (space.key !== secrets['space key']) throw new Error('space.key is no longer readable');
      },
      { baseUrl: serverUrl(), secrets },
    );

    const cdp = await context.newCDPSession(page);
    for (const name of [
      'client',
      'client withOptions',
      'space client',
      'messages',
      'inbox',
      'webhooks',
      'artifacts',
      'stream',
      'session',
      'pending join',
    ]) {
      const shown = await devtoolsView(cdp, `window.logged[${JSON.stringify(name)}]`);
      for (const [what, secret] of Object.entries(secrets))
        expect(shown.includes(secret), `the console shows the ${what} in the ${name}`).toBe(false);
      // Who it is does show (the space client's spaceId, say): the walk did see the object.
      if (name === 'space client') expect(shown).toContain('space-id');
    }
    expect(problems).toEqual([]);
  }, 60_000);
});

/**
 * Everything devtools can show of an object without running a getter: its console preview, then
 * its own properties (enumerable or not) and `#private` fields, expanded level after level. Not
 * walked: getters (devtools run them only when clicked) and a function's `[[Scopes]]`.
 */
async function devtoolsView(cdp: CDPSession, expression: string): Promise<string> {
  const shown: string[] = [];
  const { result } = await cdp.send('Runtime.evaluate', { expression, generatePreview: true });
  const seen = new Set<string>();
  const walk = async (objectId: string, depth: number): Promise<void> => {
    if (seen.has(objectId) || depth > 8) return;
    seen.add(objectId);
    const { result: properties, privateProperties = [] } = await cdp.send('Runtime.getProperties', {
      objectId,
      ownProperties: true,
      generatePreview: true,
    });
    for (const property of [...properties, ...privateProperties]) {
      if (property.name === '__proto__' || !property.value) continue;
      shown.push(`${property.name}: ${JSON.stringify(property.value)}`);
      if (property.value.objectId) await walk(property.value.objectId, depth + 1);
    }
  };
  shown.push(JSON.stringify(result));
  if (result.objectId) await walk(result.objectId, 0);
  return shown.join('\n');
}
