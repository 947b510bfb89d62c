import { describe, expect, it } from 'vitest';
import { onPostgres, useServer } from './helpers';
import { hasChromium, useBrowser } from './helpers/browser';
import { fromEnd, pageSteps, signUpInPage } from './helpers/pages';

// What a human's trial of the pages in Chromium found in session 72. What the pages do with their
// own input does not depend on the database: once, on PGlite.
describe.skipIf(!hasChromium || onPostgres())('the pages as a human found them (session 72)', () => {
  const { srv, h } = useServer();
  const { problems, newPage } = useBrowser();
  const { ownerPage } = pageSteps({ srv, h }, newPage);

  /** The contents of the space's messages, as the service keeps them. */
  const stored = async (space: { spaceId: string; ownerKey: string }) =>
    (await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey })).body.messages.map(
      (m: { content: string }) => m.content,
    );

  it('posts a message once however often Enter is pressed while it is on its way', async () => {
    const space = await h.createSpace({ name: 'Enter', description: 'a slow send' });
    const page = await ownerPage(space);
    // Each send takes a second to leave: the time to press Enter again.
    await page.route(`**/hub/space/${space.spaceId}/messages`, async (route) => {
      if (route.request().method() === 'POST') await new Promise((resolve) => setTimeout(resolve, 1000));
      await route.continue();
    });
    const box = page.locator('#message-content');
    await box.fill('only once');
    for (let i = 0; i < 3; i++) await box.press('Enter');
    await expect.poll(() => box.inputValue()).toBe('');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await stored(space)).toEqual(['only once']);
    // Once sent, Enter sends the next one.
    await box.fill('the next');
    await box.press('Enter');
    await expect.poll(() => stored(space)).toEqual(['only once', 'the next']);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('takes back a refusal of what the box held once it changed, and keeps one of the service', async () => {
    const space = await h.createSpace({ name: 'Refusals', description: 'too long, then mended' });
    const page = await ownerPage(space);
    const box = page.locator('#message-content');
    const notice = page.locator('#send-notice');
    await box.fill('x'.repeat(70_000));
    await box.press('Enter');
    await expect.poll(() => notice.textContent()).toMatch(/^This message is 70,000 characters; the limit is/);
    // Still too long: still said.
    await box.fill('x'.repeat(69_000));
    expect(await notice.isVisible()).toBe(true);
    await box.fill('hi');
    await expect.poll(() => notice.isVisible()).toBe(false);
    await box.fill('   ');
    await box.press('Enter');
    await expect.poll(() => notice.textContent()).toBe('Nothing to send: write a message first.');
    await box.fill('h');
    await expect.poll(() => notice.isVisible()).toBe(false);
    // An image message of no image address, mended by choosing text.
    await page.locator('#message-type').selectOption('image');
    await box.fill('not an address');
    await box.press('Enter');
    await expect.poll(() => notice.textContent()).toMatch(/^An image message is an https:\/\/ address/);
    await page.locator('#message-type').selectOption('text');
    await expect.poll(() => notice.isVisible()).toBe(false);
    // The service's refusal is not the box's: typing leaves it said.
    await page.route(`**/hub/space/${space.spaceId}/messages`, (route) =>
      route.request().method() === 'POST' ? route.abort('connectionrefused') : route.continue(),
    );
    await box.fill('unsent');
    await box.press('Enter');
    await expect.poll(() => notice.isVisible()).toBe(true);
    const said = await notice.textContent();
    await box.fill('unsent, mended');
    expect(await notice.textContent()).toBe(said);
    await page.close();
  }, 60_000);

  it('says in words that an image could not be loaded, and keeps the list at its newest message', async () => {
    const space = await h.createSpace({ name: 'Broken', description: 'an image that never comes' });
    const agent = await h.joinActive(space, { name: 'Bot', role: 'agent' });
    const page = await ownerPage(space);
    await page.route('https://images.test/**', (route) => route.fulfill({ status: 404, body: 'gone' }));
    for (let i = 0; i < 30; i++)
      await h.post(`/hub/space/${space.spaceId}/messages`, {
        key: agent.key,
        body: { content: `line ${i}` },
      });
    await h.post(`/hub/space/${space.spaceId}/messages`, {
      key: agent.key,
      body: { content: 'https://images.test/missing.png', type: 'image' },
    });
    const failed = page.locator('#messages .message-body.image').last();
    await expect.poll(() => failed.textContent()).toBe('(image could not be loaded: Image sent by Bot)');
    expect(await page.locator('#messages .message-body img').count()).toBe(0);
    await expect.poll(() => fromEnd(page)).toBeLessThan(2);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('keeps the composer on a laptop’s screen (1366×768) when the page opens', async () => {
    const space = await h.createSpace({
      name: 'Release plan Q3',
      description: 'What ships in the third quarter, and who reviews it',
      agenda: '1. Scope\n2. Dates\n3. Reviews',
    });
    // A log that has grown to its full height.
    for (let i = 0; i < 40; i++)
      await h.post(`/hub/space/${space.spaceId}/messages`, {
        key: space.ownerKey,
        body: { content: `line ${i}` },
      });
    const page = await ownerPage(space);
    await page.setViewportSize({ width: 1366, height: 768 });
    await page.reload();
    await page.locator('#message-content').waitFor();
    const send = await page.locator('#send-form button[type=submit]').boundingBox();
    expect((send?.y ?? Number.POSITIVE_INFINITY) + (send?.height ?? 0)).toBeLessThanOrEqual(768);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('names a token with its bidi controls written out in its Revoke button and question; numbers the default name', async () => {
    const page = await newPage();
    await page.goto(`${srv.url}/login`);
    await signUpInPage(page);
    await page.waitForURL(`${srv.url}/dashboard`);
    const create = page.getByRole('button', { name: 'Create a token' });
    const names = () => page.locator('#tokens tbody tr td:first-child').allTextContents();
    // Left empty twice: two names that tell them apart.
    await create.click();
    await expect.poll(names).toEqual(['API token']);
    await create.click();
    await expect.poll(async () => (await names()).sort()).toEqual(['API token', 'API token 2']);
    await page.getByLabel('Name', { exact: true }).fill('helper \u202Eevil');
    await create.click();
    await expect.poll(async () => (await names()).length).toBe(3);
    const revoke = page.getByRole('button', { name: 'Revoke helper [U+202E]evil' });
    expect(await revoke.count()).toBe(1);
    const asked: string[] = [];
    page.once('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.dismiss();
    });
    await revoke.click();
    await expect
      .poll(() => asked)
      .toEqual(['Revoke "helper [U+202E]evil"? An agent using it is no longer linked to you.']);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('keeps a short name’s words whole in the dashboard’s table of spaces on a phone', async () => {
    const page = await newPage();
    await page.setViewportSize({ width: 375, height: 740 });
    await page.goto(`${srv.url}/login`);
    await signUpInPage(page);
    await page.waitForURL(`${srv.url}/dashboard`);
    await page.getByLabel('Name', { exact: true }).fill('Release plan browser agent');
    await page.getByRole('button', { name: 'Create a token' }).click();
    // A space linked to the account, by the token just made.
    await expect.poll(() => page.locator('#token-secret').textContent()).toMatch(/^usr_/);
    const token = (await page.locator('#token-secret').textContent()) ?? '';
    await h.createSpace({ name: 'Uma browser space' }, { 'X-User-Token': token });
    // And one joined, then left: the longest role and two badges beside its name.
    const other = await h.createSpace({ name: 'Release plan Q3' });
    const joined = await h.post(`/hub/space/${other.spaceId}/join`, {
      key: await h.invite(other),
      headers: { 'X-User-Token': token },
      body: { name: 'Uma', isHuman: true },
    });
    expect(joined.status, joined.text).toBe(200);
    const left = await h.post(`/hub/space/${other.spaceId}/leave`, {
      key: joined.body.participantPrivateKey,
    });
    expect(left.status, left.text).toBe(200);
    await page.reload();
    const cells = page.locator('#spaces tbody td:first-child');
    await expect.poll(() => cells.count()).toBe(2);
    // Every word of the table on one line (its text nodes: 4 is NodeFilter.SHOW_TEXT).
    const broken = await page.locator('#spaces tbody').evaluate((tbody: any) => {
      const found: string[] = [];
      const walker = tbody.ownerDocument.createTreeWalker(tbody, 4);
      for (let text = walker.nextNode(); text; text = walker.nextNode())
        for (const match of (text.data as string).matchAll(/\S+/g)) {
          const range = tbody.ownerDocument.createRange();
          range.setStart(text, match.index ?? 0);
          range.setEnd(text, (match.index ?? 0) + match[0].length);
          if (new Set([...range.getClientRects()].map((r: any) => Math.round(r.top))).size > 1)
            found.push(match[0]);
        }
      return found;
    });
    expect(broken).toEqual([]);
    expect(
      await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'),
    ).toBe(0);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);
});
