import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { FakeClock } from '@convene/core';
import { describe, expect, it } from 'vitest';
import { expectOk, useServer } from './helpers';
import { mintToken, signup } from './helpers/accounts';
import { hasChromium, secretInUrl, useBrowser } from './helpers/browser';
import {
  focused,
  logInToDashboard,
  pageSteps,
  pasteKey,
  signUpInPage,
  storedCredentials,
} from './helpers/pages';

/** Set to a directory to keep screenshots of the space page (wide and phone width) there. */
const SCREENSHOT_DIR = process.env.WEB_SCREENSHOT_DIR;

/** A 1×1 PNG, so an image message needs no network. */
const PIXEL =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

describe.skipIf(!hasChromium)('the human side in a browser', () => {
  const { srv, h } = useServer();
  const { problems, newPage } = useBrowser();
  const { waitForRestMessage, joinThroughTheLink, joinedPage, editingParticipant, ownerPage } = pageSteps(
    { srv, h },
    newPage,
  );

  it('joins through the human link, keeps the key out of the URL, and sends a message that REST reads', async () => {
    const space = await h.createSpace({ name: 'Design review', description: 'Review the design doc' });
    const page = await newPage();
    const requests: { url: string; headers: Record<string, string> }[] = [];
    page.on('request', (request) => requests.push({ url: request.url(), headers: request.headers() }));
    const invite = await joinThroughTheLink(page, space, 'Ada');

    await page.waitForURL(`${srv.url}/space/${space.spaceId}`);
    expect(page.url()).not.toContain('?');
    expect(page.url()).not.toContain(invite.publicInvitationKey);
    const kept = await storedCredentials(page, space.spaceId);
    expect(kept).toMatchObject({
      role: 'participant',
      name: 'Ada',
      key: expect.stringMatching(/^[0-9a-f]{64}$/),
    });

    await expect.poll(() => page.locator('#live').textContent()).toBe('live');
    await expect.poll(() => page.locator('#space-title').textContent()).toBe('Design review');
    await expect.poll(() => page.locator('#participants li').count()).toBe(2);

    await page.getByLabel('Message', { exact: true }).fill('Hello from the browser');
    await page.keyboard.press('Enter');
    const message = await waitForRestMessage(space, (m) => m.content === 'Hello from the browser');
    expect(message).toMatchObject({
      type: 'text',
      senderName: 'Ada',
      senderId: kept.participantId,
      isOwner: false,
    });
    // The stream brings it back to the page too.
    await expect.poll(() => page.locator('#messages .message.mine').count()).toBe(1);

    // No request the page made carried a key in its URL: the stream sends it as a header too.
    for (const { url } of requests) {
      expect(url).not.toContain(kept.key);
      expect(url).not.toContain(invite.publicInvitationKey);
      expect(new URL(url).searchParams.has('key')).toBe(false);
    }
    const stream = requests.find(({ url }) => url.endsWith(`/hub/space/${space.spaceId}/messages/stream`));
    expect(stream?.headers['x-private-key']).toBe(kept.key);
    expect(stream?.headers.accept).toBe('text/event-stream');
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('sanitises html messages, keeps their formatting, shows text as text and images only from safe sources', async () => {
    const space = await h.createSpace({ name: 'Sanitising', description: 'html in messages' });
    const page = await newPage();
    // Images from another site, answered by the test: what the page sends for them can be read.
    const imageRequests: Record<string, string>[] = [];
    await page.route('https://images.test/**', (route) => {
      imageRequests.push(route.request().headers());
      return route.fulfill({
        contentType: 'image/png',
        body: Buffer.from(PIXEL.split(',')[1] ?? '', 'base64'),
      });
    });
    await joinThroughTheLink(page, space, 'Grace');
    await page.waitForURL(`${srv.url}/space/${space.spaceId}`);
    await expect.poll(() => page.locator('#live').textContent()).toBe('live');

    const send = (content: string, type: string) =>
      h.post(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey, body: { content, type } });
    expect((await send('<img src=x onerror=alert(1)><b>bold</b>', 'html')).status).toBe(200);
    expect((await send('<b>not bold</b><script>alert(2)</script>', 'text')).status).toBe(200);
    expect((await send(PIXEL, 'image')).status).toBe(200);
    expect((await send('<a href="javascript:alert(3)">x</a><i>ok</i>', 'html')).status).toBe(200);
    const formatted =
      '<p title="turn on the style">Turn <em>on</em> the <span lang="en">style</span>: <a href="https://example.com/on/base">a link</a></p>' +
      '<ul><li>one</li></ul><table><tr><th scope="col">h</th><td>d</td></tr></table>' +
      '<img src="https://images.test/cat.png" alt="a cat">';
    expect((await send(formatted, 'html')).status).toBe(200);
    expect((await send('https://images.test/dog.png', 'image')).status).toBe(200);

    const messages = page.locator('#messages .message');
    await expect.poll(() => messages.count()).toBe(6);

    const html = page.locator('#messages .message[data-type=html]').first();
    expect(await html.locator('b').textContent()).toBe('bold');
    expect(await page.locator('#messages [onerror]').count()).toBe(0);
    // The stripped img ("x" is neither https: nor data:image) is no image at all: it says so.
    expect(await html.locator('.message-body img').count()).toBe(0);
    expect(await html.locator('.message-body').textContent()).toBe('(image not shown)bold');

    const text = page.locator('#messages .message[data-type=text] .message-body');
    expect(await text.textContent()).toBe('<b>not bold</b><script>alert(2)</script>');
    expect(await text.locator('b, script').count()).toBe(0);

    const image = page.locator('#messages .message[data-type=image] .message-body img').first();
    expect(await image.getAttribute('src')).toBe(PIXEL);

    const link = page.locator('#messages .message[data-type=html]').nth(1);
    expect(await link.locator('i').textContent()).toBe('ok');
    expect(await link.locator('a').getAttribute('href')).toBeNull();
    // A link whose address was stripped leads nowhere, and looks like the text around it.
    const colour = (selector: string) =>
      link.locator(selector).evaluate((node) => node.ownerDocument.defaultView?.getComputedStyle(node).color);
    expect(await colour('a')).toMatch(/^rgb/);
    expect(await colour('a')).toBe(await colour('.message-body'));

    // Formatting survives as written ("on", "style" and "base" included); links open apart, and
    // images are lazy and send no Referer.
    expect(await page.locator('#messages .message[data-type=html] .message-body').nth(2).innerHTML()).toBe(
      '<p title="turn on the style">Turn <em>on</em> the <span lang="en">style</span>: ' +
        '<a href="https://example.com/on/base" target="_blank" rel="noopener noreferrer nofollow">a link</a></p>' +
        '<ul><li>one</li></ul><table><tbody><tr><th scope="col">h</th><td>d</td></tr></tbody></table>' +
        '<img src="https://images.test/cat.png" alt="a cat" referrerpolicy="no-referrer" loading="lazy" decoding="async">',
    );
    const dog = page.locator('#messages .message[data-type=image] .message-body img').nth(1);
    expect(await dog.getAttribute('referrerpolicy')).toBe('no-referrer');
    expect(await dog.getAttribute('loading')).toBe('lazy');
    await dog.scrollIntoViewIfNeeded();
    await page.locator('img[alt="a cat"]').scrollIntoViewIfNeeded();
    await expect.poll(() => imageRequests.length).toBe(2);
    for (const headers of imageRequests) expect(headers.referer).toBeUndefined();

    // Every message is in; an alert, had one run, would have come as its message was rendered.
    await page.evaluate('new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))');
    await page.close();
    // Not even a CSP report: the hostile markup never met the browser's parser as markup that
    // the CSP checks (lib/markup-mask.ts).
    expect(problems).toEqual([]);
  }, 60_000);

  it('locks a document, edits and saves it with baseVersion, and REST sees version 2', async () => {
    const space = await h.createSpace({ name: 'Writing', description: 'co-edit a document' });
    const artifactId = await h.createArtifact(space, 'notes', '# Notes\n\nfirst draft\n');

    const page = await newPage();
    await joinThroughTheLink(page, space, 'Linus');
    await page.waitForURL(`${srv.url}/space/${space.spaceId}`);
    await expect.poll(() => page.locator('#live').textContent()).toBe('live');
    await page.locator(`#artifacts button[data-artifact-id="${artifactId}"]`).click();
    await expect
      .poll(() => page.locator('#artifact-content-view').textContent())
      .toBe('# Notes\n\nfirst draft\n');

    await page.getByRole('button', { name: 'Lock and edit' }).click();
    const editor = page.locator('#artifact-editor');
    await editor.waitFor({ state: 'visible' });
    expect(await editor.inputValue()).toBe('# Notes\n\nfirst draft\n');
    const me = await storedCredentials(page, space.spaceId);
    const locked = await h.get(`/hub/space/${space.spaceId}/artifact/${artifactId}`, { key: space.ownerKey });
    expect(locked.body.lockedBy).toBe(me.participantId);

    await editor.fill('# Notes\n\nedited in the browser\n');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => page.locator('#artifact-notice').textContent()).toBe('Saved as version 2.');

    const saved = await h.get(`/hub/space/${space.spaceId}/artifact/${artifactId}`, { key: space.ownerKey });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({
      content: '# Notes\n\nedited in the browser\n',
      version: 2,
      updatedBy: me.participantId,
      lockedBy: me.participantId,
    });

    // A write by someone else meanwhile makes the next save a conflict, not a silent overwrite.
    await h.delete(`/hub/space/${space.spaceId}/artifact/${artifactId}/lock`, { key: space.ownerKey });
    await h.post(`/hub/space/${space.spaceId}/artifact/${artifactId}/lock`, { key: space.ownerKey });
    await h.patch(`/hub/space/${space.spaceId}/artifact/${artifactId}`, {
      key: space.ownerKey,
      body: { content: 'owner version\n' },
    });
    await h.delete(`/hub/space/${space.spaceId}/artifact/${artifactId}/lock`, { key: space.ownerKey });
    await expect.poll(() => page.getByRole('button', { name: 'Lock again' }).isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Lock again' }).click();
    // Locked again (the button goes) before saving; owner events still on their way must not
    // take the new lock from the page: it asks the server instead of believing them.
    await page.getByRole('button', { name: 'Lock again' }).waitFor({ state: 'hidden' });
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => page.locator('#artifact-notice').textContent()).toContain('it is now version 3');
    const untouched = await h.get(`/hub/space/${space.spaceId}/artifact/${artifactId}`, {
      key: space.ownerKey,
    });
    expect(untouched.body).toMatchObject({ content: 'owner version\n', version: 3 });

    // Keep the draft, save it as version 4, then release the lock.
    await page.getByRole('button', { name: 'Keep my draft (replace it on save)' }).click();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => page.locator('#artifact-notice').textContent()).toBe('Saved as version 4.');
    await page.getByRole('button', { name: 'Done editing' }).click();
    await expect.poll(() => page.locator('#artifact-editor').isHidden()).toBe(true);
    // The editor may hide on a render before the release is answered: the page says "unlocked"
    // only once it is.
    await expect.poll(() => page.locator('#artifact-meta').textContent()).toContain('· unlocked');
    // The button hid itself: the keyboard's focus goes to Lock and edit, in its place, not the body.
    await expect.poll(() => focused(page)).toBe('artifact-lock');
    const released = await h.get(`/hub/space/${space.spaceId}/artifact/${artifactId}`, {
      key: space.ownerKey,
    });
    expect(released.body).toMatchObject({ content: '# Notes\n\nedited in the browser\n', version: 4 });
    expect(released.body.lockedBy).toBeUndefined();

    await page.getByRole('button', { name: 'History' }).click();
    await expect.poll(() => page.locator('#artifact-versions li').count()).toBe(4);
    // What the panel below the versions shows is named: a version, or the changes between two.
    const row = (version: number) =>
      page.locator('#artifact-versions li').filter({ hasText: new RegExp(`^Version ${version} `) });
    await row(2).getByRole('button', { name: 'Changes' }).click();
    await expect
      .poll(() => page.locator('#artifact-version-title').textContent())
      .toBe('Changes from version 1 to version 2');
    expect(await page.locator('#artifact-version-view').textContent()).toContain('+edited in the browser');
    // Read at a glance: an added line is marked as one, removed ones and the headers apart; the
    // text stays the patch, whole.
    expect(await page.locator('#artifact-version-view .diff-add').allTextContents()).toContain(
      '+edited in the browser',
    );
    expect(await page.locator('#artifact-version-view .diff-del').allTextContents()).toContain(
      '-first draft',
    );
    expect(await page.locator('#artifact-version-view .diff-meta').first().textContent()).toMatch(/^--- /);
    expect(await page.locator('#artifact-version-view .diff-line').allTextContents()).toEqual([
      '--- notes.md\tversion 1',
      '+++ notes.md\tversion 2',
      '@@ -1,3 +1,3 @@',
      ' # Notes',
      ' ',
      '-first draft',
      '+edited in the browser',
    ]);
    await row(1).getByRole('button', { name: 'View' }).click();
    await expect.poll(() => page.locator('#artifact-version-title').textContent()).toBe('Version 1');
    expect(await page.locator('#artifact-version-view').textContent()).toBe('# Notes\n\nfirst draft\n');

    await h.post(`/hub/space/${space.spaceId}/messages`, {
      key: space.ownerKey,
      body: { content: '<p>Thanks, <b>Linus</b>! The <i>notes</i> look good.</p>', type: 'html' },
    });
    await h.post(`/hub/space/${space.spaceId}/messages`, {
      key: space.ownerKey,
      body: { content: 'Next: the release checklist.', type: 'text' },
    });
    await expect.poll(() => page.locator('#messages .message').count()).toBe(2);
    if (SCREENSHOT_DIR) {
      mkdirSync(SCREENSHOT_DIR, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOT_DIR, 'space-page.png'), fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: join(SCREENSHOT_DIR, 'space-page-phone.png'), fullPage: true });
    }
    await page.close();
    expect(problems).toEqual([]);
  }, 90_000);

  it('keeps its lock when the stream tells of an unlock older than the lock it holds', async () => {
    const space = await h.createSpace({ name: 'Stale events', description: 'events on their way' });
    const { page, lockPath } = await editingParticipant(space, 'Edsger');
    const me = await storedCredentials(page, space.spaceId);

    // The page's question to the server waits until the participant holds the lock again, as a
    // lock taken meanwhile would: by then the "unlocked" event it asks about is stale.
    let relock = () => {};
    const relocked = new Promise<void>((resolve) => {
      relock = resolve;
    });
    await page.route(`**${lockPath}/heartbeat`, async (route) => {
      await relocked;
      await route.continue();
    });
    const checked = page.waitForResponse((response) => response.url().endsWith(`${lockPath}/heartbeat`));
    expect((await h.delete(lockPath, { key: space.ownerKey })).status).toBe(200);
    expect((await h.post(lockPath, { key: me.key })).status).toBe(200);
    relock();
    expect((await checked).status()).toBe(200);
    await page.unroute(`**${lockPath}/heartbeat`);

    expect(await page.getByRole('button', { name: 'Lock again' }).isHidden()).toBe(true);
    await page.locator('#artifact-editor').fill('second\n');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => page.locator('#artifact-notice').textContent()).toBe('Saved as version 2.');
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('keeps editing, text and lock, when the release of its lock is not answered; Done editing again releases it', async () => {
    const space = await h.createSpace({ name: 'Lost release', description: 'an unlock without answer' });
    const { page, lockPath } = await editingParticipant(space, 'Grace');
    const me = await storedCredentials(page, space.spaceId);
    const editor = page.locator('#artifact-editor');
    await editor.fill('my draft\n');
    const unlock = `**${lockPath}`;
    await page.route(unlock, (route) =>
      route.request().method() === 'DELETE' ? route.abort('internetdisconnected') : route.continue(),
    );
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Done editing' }).click();
    await expect
      .poll(() => page.locator('#artifact-notice').textContent(), { timeout: 20_000 })
      .toBe(
        'The service cannot be reached; check your connection and try again. The lock was not released: you are still editing.',
      );
    expect(await editor.isVisible()).toBe(true);
    expect(await editor.inputValue()).toBe('my draft\n');
    const held = await h.get(lockPath.replace(/\/lock$/, ''), { key: space.ownerKey });
    expect(held.body.lockedBy).toBe(me.participantId);

    await page.unroute(unlock);
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Done editing' }).click();
    await expect.poll(() => editor.isHidden()).toBe(true);
    await expect.poll(() => page.locator('#artifact-meta').textContent()).toContain('· unlocked');
    // Its own release, told by the stream too, is no lock lost.
    expect(await page.locator('#artifact-notice').textContent()).toBe('');
    const released = await h.get(lockPath.replace(/\/lock$/, ''), { key: space.ownerKey });
    expect(released.body.lockedBy).toBeUndefined();
    await page.close();
    expect(problems.filter((p) => !p.includes('net::ERR_INTERNET_DISCONNECTED'))).toEqual([]);
  }, 60_000);

  it('saves the document being edited with Ctrl+S, not the page as the browser would', async () => {
    const space = await h.createSpace({ name: 'Shortcuts', description: 'keyboard saving' });
    const { page } = await editingParticipant(space, 'Dennis');
    await page.locator('#artifact-editor').fill('saved from the keyboard\n');
    await page.keyboard.press('Control+s');
    await expect.poll(() => page.locator('#artifact-notice').textContent()).toBe('Saved as version 2.');
    expect(await focused(page)).toBe('artifact-editor');
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('says who holds a lock taken from it, and offers Save again only once it locks again', async () => {
    const space = await h.createSpace({
      name: 'Taken',
      description: 'a lock taken away',
      ownerName: 'Grace',
    });
    const { page, lockPath } = await editingParticipant(space, 'Barbara');
    await page.locator('#artifact-editor').fill('my draft\n');

    // The owner releases the participant's lock and takes the document.
    expect((await h.delete(lockPath, { key: space.ownerKey })).status).toBe(200);
    expect((await h.post(lockPath, { key: space.ownerKey })).status).toBe(200);
    await expect
      .poll(() => page.locator('#artifact-notice').textContent())
      .toContain('no longer hold the lock');
    await expect.poll(() => page.locator('#artifact-meta').textContent()).toContain('locked by Grace');
    expect(await page.locator('#artifact-meta').textContent()).not.toContain('locked by you');
    expect(await page.getByRole('button', { name: 'Save', exact: true }).isHidden()).toBe(true);
    expect(await page.locator('#artifact-editor').inputValue()).toBe('my draft\n');

    // Once the owner is done, locking again lets the draft be saved.
    expect((await h.delete(lockPath, { key: space.ownerKey })).status).toBe(200);
    await page.getByRole('button', { name: 'Lock again' }).click();
    await page.getByRole('button', { name: 'Lock again' }).waitFor({ state: 'hidden' });
    expect(await page.locator('#artifact-meta').textContent()).toContain('locked by you');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => page.locator('#artifact-notice').textContent()).toBe('Saved as version 2.');
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('waits for approval in a private space, then enters; the owner page shows moderation buttons', async () => {
    const space = await h.createSpace({
      name: 'Private room',
      description: 'by approval',
      privacy: 'private',
      ownerName: 'Olga',
    });
    const page = await newPage();
    await joinThroughTheLink(page, space, 'Hopper');
    await page.getByRole('heading', { name: 'Waiting for approval' }).waitFor();

    // The owner, in another tab of the same browser, opens the space with the owner key.
    const owner = await ownerPage(space);
    await owner.getByRole('button', { name: 'Approve Hopper' }).click();

    await page.waitForURL(`${srv.url}/space/${space.spaceId}`, { timeout: 15_000 });
    await expect.poll(() => page.locator('#live').textContent()).toBe('live');
    // The owner's page learns the new status over the stream and offers to mute.
    await owner.getByRole('button', { name: 'Mute Hopper' }).waitFor();
    await page.getByLabel('Message', { exact: true }).fill('can I speak?');
    await owner.getByRole('button', { name: 'Mute Hopper' }).click();
    // Hopper's page hears it: the message waits in a box that no longer sends, and says why.
    await expect.poll(() => page.getByLabel('Message', { exact: true }).isDisabled()).toBe(true);
    expect(await page.getByLabel('Message', { exact: true }).inputValue()).toBe('can I speak?');
    expect(await page.locator('#send-notice').textContent()).toBe(
      'The owner has muted you: you can read, but not send.',
    );
    await page.close();
    await owner.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('tells a joiner whom the owner refused that they were refused, not that the link is wrong', async () => {
    const space = await h.createSpace({
      name: 'Closed door',
      description: 'by approval',
      privacy: 'private',
    });
    const page = await newPage();
    await joinThroughTheLink(page, space, 'Turing');
    await page.getByRole('heading', { name: 'Waiting for approval' }).waitFor();
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    const joiner = view.body.participants.find((p: { name: string }) => p.name === 'Turing');
    const refuse = await h.post(`/hub/space/${space.spaceId}/participants/${joiner.participantId}/kick`, {
      key: space.ownerKey,
    });
    expect(refuse.status, refuse.text).toBe(200);
    await expect
      .poll(() => page.locator('#join-notice').textContent(), { timeout: 10_000 })
      .toBe('The owner did not let you in. Ask them for a new invitation if you think this is a mistake.');
    expect(await page.getByRole('heading', { name: 'Waiting for approval' }).isVisible()).toBe(false);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('creates a space on the home page, shows the owner key once, and opens it as the owner', async () => {
    const page = await newPage();
    await page.goto(`${srv.url}/`);
    await page.getByLabel('Name', { exact: true }).fill('Launch party');
    await page.getByLabel('Description').fill('Plan the launch');
    await page.getByLabel('Your name').fill('Olga');
    await page.getByRole('button', { name: 'Create the space' }).click();
    await page.getByRole('heading', { name: 'Your space is ready' }).waitFor();
    const ownerKey = (await page.locator('#owner-key').textContent()) ?? '';
    expect(ownerKey).toMatch(/^[0-9a-f]{64}$/);
    const humanLink = new URL((await page.locator('#human-link').textContent()) ?? '');
    expect(humanLink.hash).toMatch(/^#key=/);
    const spaceId = humanLink.pathname.split('/').pop()!;
    const space = await h.get(`/hub/space/${spaceId}`, { key: ownerKey });
    expect(space.body).toMatchObject({
      name: 'Launch party',
      description: 'Plan the launch',
      privacy: 'public',
    });

    await page.getByRole('link', { name: 'Open the space' }).click();
    await page.waitForURL(`${srv.url}/space/${spaceId}`);
    await expect.poll(() => page.locator('#live').textContent()).toBe('live');
    await page.getByRole('button', { name: 'Invite' }).click();
    await expect.poll(() => page.locator('#invite-human').inputValue()).toMatch(/\/join\/.+#key=/);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('ends the page of a removed participant and every page of a closed space; a pasted key learns whose it is', async () => {
    const space = await h.createSpace({ name: 'Short meeting', description: 'ends soon' });
    const removed = await newPage();
    await joinThroughTheLink(removed, space, 'Kim');
    await removed.waitForURL(`${srv.url}/space/${space.spaceId}`);
    await expect.poll(() => removed.locator('#live').textContent()).toBe('live');
    const kim = await storedCredentials(removed, space.spaceId);

    // A participant key pasted into a fresh tab: the space says whose it is (getSpace's `you`),
    // and the page asks nothing else to find out (it once probed with an owner's approve).
    const pasted = await h.joinActive(space, { name: 'Pat', isHuman: true });
    const page = await newPage();
    const writes: string[] = [];
    page.on('request', (request) => {
      if (request.method() !== 'GET') writes.push(`${request.method()} ${new URL(request.url()).pathname}`);
    });
    await pasteKey(page, srv.url, space.spaceId, pasted.key);
    await expect.poll(() => page.locator('#live').textContent()).toBe('live');
    const me = { key: pasted.key, role: 'participant', participantId: pasted.participantId, name: 'Pat' };
    expect(await storedCredentials(page, space.spaceId)).toEqual(me);
    await expect.poll(() => page.locator('#participants li', { hasText: '(you)' }).count()).toBe(1);
    expect(writes).toEqual([]);
    // The message comes back on the stream before the answer to sending it (held here until
    // then): the page learns whose it is from the answer, and marks it as its own all the same.
    const messagesPath = `/hub/space/${space.spaceId}/messages`;
    await page.route(`**${messagesPath}`, async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      const response = await route.fetch();
      await page.locator('#messages .message', { hasText: 'who am I?' }).waitFor();
      // The page may have given the request up meanwhile (a loaded machine): the route is then
      // handled already, and what it answers no longer matters (CI once failed on this rejection).
      return route.fulfill({ response }).catch(() => {});
    });
    await page.getByLabel('Message', { exact: true }).fill('who am I?');
    await page.keyboard.press('Enter');
    await expect.poll(() => storedCredentials(page, space.spaceId)).toEqual(me);
    await expect.poll(() => page.locator('#messages .message.mine').count()).toBe(1);
    await page.unroute(`**${messagesPath}`);
    await expect.poll(() => page.getByRole('button', { name: 'Leave the space' }).isVisible()).toBe(true);

    const kick = await h.post(`/hub/space/${space.spaceId}/participants/${kim.participantId}/kick`, {
      key: space.ownerKey,
    });
    expect(kick.status, kick.text).toBe(200);
    await expect
      .poll(() => removed.locator('#space-notice').textContent())
      .toBe('The owner removed you from this space.');
    expect(await removed.locator('#live').textContent()).toBe('ended');
    // The space goes on for the others: it is not "closed", this tab was removed from it.
    expect(await removed.locator('#space-state').textContent()).toBe('removed');
    expect(await removed.getByRole('button', { name: 'Send' }).isDisabled()).toBe(true);

    const close = await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect(close.status, close.text).toBe(200);
    await expect.poll(() => page.locator('#space-notice').textContent()).toBe('The owner closed this space.');
    expect(await page.locator('#live').textContent()).toBe('ended');
    expect(await page.locator('#space-state').textContent()).toBe('closed');
    expect(await page.getByRole('button', { name: 'Send' }).isDisabled()).toBe(true);
    // Reloaded, the tab says why its key no longer opens the space (closed, for good), not that it
    // holds none, nor a list of guesses; no other key would open it, so none is asked for.
    await page.reload();
    await expect
      .poll(() => page.locator('#space-notice').textContent())
      .toBe('This space was closed by its owner, for good: nothing in it can be read or sent any more.');
    expect(await page.locator('#no-key').isHidden()).toBe(true);
    await removed.close();
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('counts a request with a secret in its URL as a problem, the check every test here ends with', async () => {
    const uuid = '00000000-0000-4000-8000-000000000000';
    for (const clean of [
      `${srv.url}/space/${uuid}`,
      `${srv.url}/avatar/${uuid}.svg`,
      `${srv.url}/web/chunk-APIXX3BC.js`,
      `${srv.url}/link?code=ABCD-EFGH`,
      `${srv.url}/login?next=%2Flink%3Fcode%3DABCD-EFGH`,
      `${srv.url}/hub/space/${uuid}/messages/stream`,
    ])
      expect(secretInUrl(clean), clean).toBeUndefined();
    for (const leaking of [
      `${srv.url}/hub/space/${uuid}/messages/stream?key=abc`,
      `${srv.url}/hub/space/${uuid}?%6Bey=abc`,
      `${srv.url}/x?access_token=abc`,
      `${srv.url}/x/${'ab12'.repeat(16)}`,
      `${srv.url}/x?q=inv_AbCdEfGhIjKlMnOpQrStUvWx`,
      `${srv.url}/x?q=usr_AbCdEfGhIjKlMnOpQrStUvWx`,
      `${srv.url}/x?q=eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiIxIn0.sig`,
    ])
      expect(secretInUrl(leaking), leaking).toBeDefined();

    const page = await newPage();
    await page.goto(`${srv.url}/login`);
    await page.evaluate(`fetch('/openapi.json?key=${'0'.repeat(64)}').catch(() => {})`);
    await expect.poll(() => problems.length).toBe(1);
    expect(problems[0]).toMatch(/^secret in a URL \(a key parameter\): GET /);
    problems.length = 0;
    await page.close();
  }, 60_000);

  it('keeps the keyboard focus: a document opened with Enter takes it, moderation keeps it on the participant', async () => {
    const space = await h.createSpace({ name: 'Keyboard', description: 'no mouse', ownerName: 'Kay' });
    await h.joinActive(space, { name: 'Robo' });
    const artifactId = await h.createArtifact(space, 'agenda', '# Agenda\n');
    const page = await ownerPage(space);

    await page.locator(`#artifacts button[data-artifact-id="${artifactId}"]`).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe('artifact-title');
    expect(await page.locator('#artifact-title').textContent()).toBe('agenda');

    // Each change comes back on the stream and redraws the list: the focus stays on Robo's row.
    await page.getByRole('button', { name: 'Mute Robo' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Unmute Robo' }).waitFor();
    await expect.poll(() => focused(page)).toBe('Unmute Robo');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Mute Robo' }).waitFor();
    await expect.poll(() => focused(page)).toBe('Mute Robo');
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('says an address that names no space does, rather than asking for its key', async () => {
    const page = await newPage();
    // An id that is no UUID: the server's JSON 404 says so, in words (never an HTML error page).
    const response = await page.goto(`${srv.url}/space/not-a-space`);
    expect(response?.status()).toBe(404);
    expect((await response!.json()).error).toBe(
      'No space has this address. Check the link you were given: a space’s address ends with its id.',
    );
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('says what an image message takes before sending one it cannot be', async () => {
    const space = await h.createSpace({ name: 'Pictures', description: 'images only from safe places' });
    const page = await ownerPage(space);
    await page.getByLabel('Message type').selectOption('image');
    await page.getByLabel('Message', { exact: true }).fill('http://images.test/cat.png');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.locator('#send-notice').textContent())
      .toBe(
        'An image message is an https:// address of an image, or a data:image URI (png, jpeg, gif or webp).',
      );
    expect(await page.getByLabel('Message', { exact: true }).inputValue()).toBe('http://images.test/cat.png');
    await page.getByLabel('Message', { exact: true }).fill(PIXEL);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#messages .message[data-type=image]').count()).toBe(1);
    expect(await page.locator('#send-notice').isHidden()).toBe(true);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('says a send whose answer was lost may have gone, and sends it again without posting it twice', async () => {
    const space = await h.createSpace({ name: 'Lossy', description: 'answers lost on the way' });
    const page = await ownerPage(space);
    const messagesPath = `**/hub/space/${space.spaceId}/messages`;
    // The first attempt reaches the server, which posts the message; its answer never comes back,
    // nor any answer to the client's retries.
    const keys: (string | null)[] = [];
    await page.route(messagesPath, async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      keys.push(await route.request().headerValue('idempotency-key'));
      if (keys.length === 1) await route.fetch();
      return route.abort('connectionreset');
    });
    const box = page.getByLabel('Message', { exact: true });
    await box.fill('did it go?');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.locator('#send-notice').textContent(), { timeout: 15_000 })
      .toBe(
        'The service cannot be reached; check your connection and try again. If the message reached the service before that, it shows above; sending it again as it is cannot post it twice.',
      );
    // It was: the stream brought it. The text stays in the box.
    await expect.poll(() => page.locator('#messages .message').count()).toBe(1);
    expect(await box.inputValue()).toBe('did it go?');

    await page.unroute(messagesPath);
    const resent: (string | null)[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/messages'))
        resent.push(request.headers()['idempotency-key'] ?? null);
    });
    await page.keyboard.press('Enter');
    await expect.poll(() => box.inputValue()).toBe('');
    expect(await page.locator('#send-notice').isHidden()).toBe(true);
    // Sent with the first attempt's key: the server answered it as it did the first time.
    expect(new Set(keys).size).toBe(1);
    expect(resent).toEqual([keys[0]]);
    const listed = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    expect(listed.body.messages.map((m: { content: string }) => m.content)).toEqual(['did it go?']);
    expect(await page.locator('#messages .message').count()).toBe(1);

    // Another message after it goes with a key of its own.
    await box.fill('and this one');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#messages .message').count()).toBe(2);
    expect(resent).toHaveLength(2);
    expect(resent[1]).not.toBe(keys[0]);

    // Cut off again (never reaching the server), then refused outright: the key of the cut-off
    // attempts is dropped, since the server would replay that refusal under it.
    let step = 0;
    await page.route(messagesPath, (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      step += 1;
      if (step <= 3) return route.abort('connectionreset');
      return route.fulfill({
        status: 400,
        contentType: 'application/json',
        body: '{"error":"refused here"}',
      });
    });
    await box.fill('third');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.locator('#send-notice').textContent(), { timeout: 15_000 })
      .toContain('If the message reached');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#send-notice').textContent()).toContain('refused here');
    await page.unroute(messagesPath);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#messages .message').count()).toBe(3);
    // Two sends before; three cut-off attempts, the refused one, the last send.
    expect(resent).toHaveLength(2 + 3 + 1 + 1);
    // The cut-off attempts and the refused one shared a key; the last send had its own.
    expect(new Set(resent.slice(2, 6)).size).toBe(1);
    expect(resent[6]).not.toBe(resent[2]);
    await page.close();
    // The browser reports each request the test cut off; nothing else may go wrong.
    expect(problems.filter((p) => !p.includes('net::ERR_CONNECTION_RESET'))).toEqual([]);
  }, 60_000);

  it('asks for a key without empty badges where the space state and the live dot go', async () => {
    const space = await h.createSpace({ name: 'Keyless', description: 'no key in this tab' });
    const page = await newPage();
    await page.goto(`${srv.url}/space/${space.spaceId}`);
    await page.locator('#no-key').waitFor();
    expect(await page.locator('#space-state').isVisible()).toBe(false);
    expect(await page.locator('#live').isVisible()).toBe(false);
    await pasteKey(page, srv.url, space.spaceId, space.ownerKey);
    await expect.poll(() => page.locator('#live').textContent()).toBe('live');
    expect(await page.locator('#space-state').textContent()).toBe('open');
    expect(await page.locator('#space-state').isVisible()).toBe(true);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('reads a link pasted into the address bar of a page already open, and takes its key out of the address', async () => {
    const space = await h.createSpace({ name: 'Pasted', description: 'a link pasted into the tab' });
    const page = await newPage();
    await page.goto(`${srv.url}/space/${space.spaceId}`);
    await page.locator('#no-key').waitFor();
    // Only the fragment changes: no load, a hashchange.
    await page.goto(`${srv.url}/space/${space.spaceId}#key=${space.ownerKey}`);
    await expect.poll(() => page.locator('#live').textContent()).toBe('live');
    expect(new URL(page.url()).hash).toBe('');
    const join = await newPage();
    await join.goto(`${srv.url}/join/${space.spaceId}`);
    await join.goto(`${srv.url}/join/${space.spaceId}#key=${await h.invite(space)}`);
    await join.locator('#join-section').waitFor();
    expect(new URL(join.url()).hash).toBe('');
    await page.close();
    await join.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('lets a muted lock holder finish: resume editing, save and release; a removed one sees no notice of before', async () => {
    const space = await h.createSpace();
    const artifactId = await h.createArtifact(space, 'plan', 'first\n');
    const page = await joinedPage(space, 'Muted Mo');
    const mo = await storedCredentials(page, space.spaceId);
    // The lock is Mo's (taken elsewhere: another tab, the CLI), not this page's editor's; then
    // the owner mutes Mo.
    expectOk(await h.post(`/hub/space/${space.spaceId}/artifact/${artifactId}/lock`, { key: mo.key }));
    await page.locator(`#artifacts button[data-artifact-id="${artifactId}"]`).click();
    const mute = `/hub/space/${space.spaceId}/participants/${mo.participantId}/mute`;
    expectOk(await h.post(mute, { key: space.ownerKey }));
    await expect.poll(() => page.locator('#send-notice').textContent()).toMatch(/muted you/);
    const resume = page.getByRole('button', { name: 'Lock and edit' });
    await expect.poll(() => resume.isEnabled()).toBe(true);
    await resume.click();
    await page.locator('#artifact-editor').fill('written while muted\n');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.locator('#artifact-notice').textContent()).toMatch(/^Saved/);
    const held = await h.get(`/hub/space/${space.spaceId}/artifact/${artifactId}`, { key: space.ownerKey });
    expect(held.body).toMatchObject({
      version: 2,
      content: 'written while muted\n',
      lockedBy: mo.participantId,
    });
    // Removed: the page says so, and nothing it said before (muted, saved) stays under it.
    const kick = `/hub/space/${space.spaceId}/participants/${mo.participantId}/kick`;
    expectOk(await h.post(kick, { key: space.ownerKey }));
    await expect
      .poll(() => page.locator('#space-notice').textContent())
      .toBe('The owner removed you from this space.');
    expect(await page.locator('#send-notice').textContent()).toBe('');
    expect(await page.locator('#artifact-notice').textContent()).toBe('');
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('keeps a long description to a few lines above the conversation, the whole of it a click away', async () => {
    const description = `${'A description that goes on and on. '.repeat(280)}The end.`;
    const space = await h.createSpace({ name: 'Verbose', description });
    const page = await ownerPage(space);
    const text = page.locator('#space-description');
    expect(await text.textContent()).toBe(description);
    // The conversation starts on the first screen (900 px high), not after pages of description.
    expect((await page.locator('#messages-title').boundingBox())?.y).toBeLessThan(450);
    await page.getByRole('button', { name: 'Show the whole description' }).click();
    await expect.poll(async () => (await text.boundingBox())?.height ?? 0).toBeGreaterThan(1000);
    await page.getByRole('button', { name: 'Show less' }).click();
    await expect.poll(async () => (await text.boundingBox())?.height ?? 0).toBeLessThan(150);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('rides out an outage: while the service is out of reach it says so and keeps trying, then is live again', async () => {
    const space = await h.createSpace({ name: 'Outage', description: 'the network goes away' });
    const page = await newPage();
    // The network goes once the page has the space: the stream and every later look at the space fail.
    let down = false;
    const streamPath = `**/hub/space/${space.spaceId}/messages/stream`;
    const spacePath = `**/hub/space/${space.spaceId}`;
    await page.route(streamPath, (route) => {
      down = true;
      return route.abort('internetdisconnected');
    });
    await page.route(spacePath, (route) => (down ? route.abort('internetdisconnected') : route.continue()));
    await pasteKey(page, srv.url, space.spaceId, space.ownerKey);
    await expect
      .poll(() => page.locator('#space-notice').textContent(), { timeout: 15_000 })
      .toBe(
        'The service cannot be reached; check your connection and try again. This page reconnects by itself when it can.',
      );
    expect(await page.locator('#live').textContent()).toBe('disconnected');
    expect(await page.getByRole('button', { name: 'Send' }).isDisabled()).toBe(false);

    await page.unroute(streamPath);
    await page.unroute(spacePath);
    await expect.poll(() => page.locator('#live').textContent(), { timeout: 15_000 }).toBe('live');
    expect(await page.locator('#space-notice').isHidden()).toBe(true);
    await page.getByLabel('Message', { exact: true }).fill('back again');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#messages .message').count()).toBe(1);
    await page.close();
    // The browser reports each request the test cut off; nothing else may go wrong.
    expect(problems.filter((p) => !p.includes('net::ERR_INTERNET_DISCONNECTED'))).toEqual([]);
  }, 60_000);

  it('announces live messages to screen readers, not the backlog it replays on opening', async () => {
    const space = await h.createSpace({ name: 'Backlog', description: 'many messages before' });
    for (const content of ['one', 'two', 'three'])
      expect(
        (await h.post(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey, body: { content } }))
          .status,
      ).toBe(200);
    const page = await newPage();
    // Each message the page adds is noted with the list's aria-live at that moment.
    await page.addInitScript(`
      window.__live = [];
      new MutationObserver((records) => {
        for (const record of records)
          for (const node of record.addedNodes)
            if (node.classList?.contains('message'))
              window.__live.push(node.querySelector('.message-body').textContent + ':' + record.target.getAttribute('aria-live'));
      }).observe(document, { childList: true, subtree: true });
    `);
    await pasteKey(page, srv.url, space.spaceId, space.ownerKey);
    await expect.poll(() => page.locator('#live').textContent()).toBe('live');
    expect(
      (
        await h.post(`/hub/space/${space.spaceId}/messages`, {
          key: space.ownerKey,
          body: { content: 'four' },
        })
      ).status,
    ).toBe(200);
    await expect.poll(() => page.locator('#messages .message').count()).toBe(4);
    expect(await page.evaluate('window.__live')).toEqual(['one:off', 'two:off', 'three:off', 'four:polite']);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('wraps names without spaces instead of widening the page, on a desk and on a phone', async () => {
    // The longest names the service takes, each one unbroken word (a URL, a hash, a name in a script without spaces).
    const word = (letter: string) => letter.repeat(200);
    const space = await h.createSpace({
      name: word('S'),
      description: word('D'),
      ownerName: word('O'),
      ownerRole: word('R'),
    });
    const agent = await h.joinActive(space, { name: word('N'), role: word('P') });
    await h.post(`/hub/space/${space.spaceId}/messages`, { key: agent.key, body: { content: word('M') } });
    const artifactId = await h.createArtifact(space, word('A'), word('C'), agent.key);
    const page = await newPage();
    await pasteKey(page, srv.url, space.spaceId, space.ownerKey);
    await expect.poll(() => page.locator('#messages .message').count()).toBe(1);
    await page.locator(`#artifacts button[data-artifact-id="${artifactId}"]`).click();
    await page.locator('#artifact-view').waitFor();
    const overflow = () =>
      page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(await overflow()).toBe(0);
    // The button beside the long title keeps its one line.
    expect(
      (await page.getByRole('button', { name: 'Close the document' }).boundingBox())?.height,
    ).toBeLessThan(60);
    await page.setViewportSize({ width: 375, height: 740 });
    expect(await overflow()).toBe(0);
    // The page's own words do not break to make room: a button keeps one line.
    for (const name of [`Mute ${word('N')}`, `Remove ${word('N')}`])
      expect((await page.getByRole('button', { name }).boundingBox())?.height).toBeLessThan(60);
    const join = await newPage();
    await join.setViewportSize({ width: 375, height: 740 });
    await join.goto(`${srv.url}/join/${space.spaceId}#key=${await h.invite(space)}`);
    await join.locator('#join-section').waitFor();
    const joinOverflow = () =>
      join.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(await joinOverflow()).toBe(0);

    // A dashboard of long names on a phone: its table keeps the short columns' words whole.
    await join.goto(`${srv.url}/login`);
    await signUpInPage(join, word('H'));
    await join.waitForURL(`${srv.url}/dashboard`);
    await join.getByLabel('Name', { exact: true }).fill(word('T'));
    await join.getByRole('button', { name: 'Create a token' }).click();
    await expect.poll(() => join.locator('#tokens tbody tr').count()).toBe(1);
    expect(await joinOverflow()).toBe(0);
    for (const header of await join.locator('#tokens th').all())
      expect((await header.boundingBox())?.height ?? 0).toBeLessThan(60);
    expect((await join.getByRole('link', { name: 'Dashboard' }).boundingBox())?.height).toBeLessThan(40);
    await join.close();
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('takes an invitation key pasted on the space page to the join page, which joins with it', async () => {
    const space = await h.createSpace({ name: 'Pasted invitation', description: 'a key that only joins' });
    const invitationKey = await h.invite(space);
    const page = await newPage();
    await pasteKey(page, srv.url, space.spaceId, invitationKey);
    await page.waitForURL(`${srv.url}/join/${space.spaceId}`);
    await expect.poll(() => page.locator('#space-title').textContent()).toBe('Pasted invitation');
    await page.getByLabel('Your name').fill('Ken');
    await page.getByRole('button', { name: 'Join the space' }).click();
    await page.waitForURL(`${srv.url}/space/${space.spaceId}`);
    await expect.poll(() => page.locator('#live').textContent()).toBe('live');
    expect(await storedCredentials(page, space.spaceId)).toMatchObject({ role: 'participant', name: 'Ken' });
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('shows a readable error for a space that does not exist', async () => {
    const page = await newPage();
    await page.goto(`${srv.url}/join/00000000-0000-4000-8000-000000000000#key=nope`);
    await expect
      .poll(() => page.locator('#join-notice').textContent())
      .toBe('Not found (space not found). The link may be mistyped, or the space no longer exists.');
    expect(page.url()).toBe(`${srv.url}/join/00000000-0000-4000-8000-000000000000`);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('offers to log in again, in the page and the navigation, once the dashboard session is refused', async () => {
    const page = await newPage();
    await page.goto(`${srv.url}/login`);
    await signUpInPage(page, 'Margaret');
    await page.waitForURL(`${srv.url}/dashboard`);
    await expect.poll(() => page.locator('#session-nav').textContent()).toBe('Margaret');
    // The server no longer takes the tab's session (as after a restart with another signing key).
    const kept = await page.evaluate(`sessionStorage.getItem('convene:session')`);
    const refuseSession = () =>
      page.evaluate(`(() => {
        const session = JSON.parse(${JSON.stringify(kept)});
        sessionStorage.setItem('convene:session', JSON.stringify({ ...session, token: session.token + 'x' }));
      })()`);
    await refuseSession();
    await page.reload();
    await expect
      .poll(() => page.locator('#dashboard-notice').textContent())
      .toBe('Your session has expired. Log in again.');
    expect(await page.locator('#session-nav').textContent()).toBe('Log in');
    expect(await page.locator('#session-nav a').getAttribute('href')).toBe('/login');

    // The same on a space page, when the key is to come from the dashboard.
    const space = await h.createSpace({ name: 'Recovered', description: 'a key from the dashboard' });
    await refuseSession();
    await page.goto(`${srv.url}/space/${space.spaceId}`);
    await page.getByRole('button', { name: 'Use my key from the dashboard' }).click();
    await expect
      .poll(() => page.locator('#space-notice').textContent())
      .toBe('Your session has expired. Log in again to use the keys of your dashboard.');
    expect(await page.locator('#session-nav').textContent()).toBe('Log in');
    expect(await page.getByRole('button', { name: 'Use my key from the dashboard' }).isHidden()).toBe(true);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('keeps the Open button of each space in reach on a phone: the time-left column gives way', async () => {
    const human = await signup(h, { name: 'Pia' });
    const { token } = await mintToken(h, human);
    for (const name of ['Agent-created space', 'Quarterly planning and review'])
      expectOk(
        await h.post('/hub/space', { headers: { 'X-User-Token': token }, body: { name, description: 'd' } }),
      );
    const page = await newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    await logInToDashboard(page, srv.url, human);
    await expect.poll(() => page.locator('#spaces tbody tr').count()).toBe(2);
    const wrap = (await page.locator('#spaces').locator('xpath=..').boundingBox())!;
    for (const open of await page.locator('#spaces button', { hasText: 'Open' }).all()) {
      const box = (await open.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(wrap.x + wrap.width + 0.5);
    }
    expect(await page.locator('#spaces th', { hasText: 'Time left' }).isHidden()).toBe(true);
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(await page.locator('#spaces th', { hasText: 'Time left' }).isVisible()).toBe(true);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('lists a space the human waits to enter with a status in words on the dashboard', async () => {
    const human = await signup(h, { name: 'Rita' });
    const { token } = await mintToken(h, human);
    const space = await h.createSpace({
      name: 'Antechamber',
      description: 'by approval',
      privacy: 'private',
    });
    const join = await h.post(`/hub/space/${space.spaceId}/join`, {
      key: await h.invite(space),
      headers: { 'X-User-Token': token },
      body: { name: 'Rita', isHuman: true },
    });
    expect(join.status, join.text).toBe(202);
    const page = await newPage();
    await logInToDashboard(page, srv.url, human);
    await expect.poll(() => page.locator('#spaces tbody tr').count()).toBe(1);
    expect(await page.locator('#spaces tbody .badge').allTextContents()).toEqual([
      'open',
      'waiting for approval',
    ]);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('signs up, links an agent by its code, and manages tokens on the dashboard', async () => {
    const start = await h.post('/hub/link/start', { body: { agentName: 'Build bot' } });
    expect(start.status).toBe(200);
    const page = await newPage();
    await page.goto(start.body.verificationUriComplete);
    await page.getByRole('link', { name: 'Log in to continue' }).click();
    await page.waitForURL(/\/login\?next=/);
    await signUpInPage(page);
    await page.waitForURL(/\/link\?code=/);
    await expect.poll(() => page.locator('#link-agent').textContent()).toBe('Build bot');
    // The agent's name stands apart from the form above it (it touched the button).
    const lookUp = await page.getByRole('button', { name: 'Look up' }).boundingBox();
    const request = await page.locator('#link-request').boundingBox();
    expect((request?.y ?? 0) - ((lookUp?.y ?? 0) + (lookUp?.height ?? 0))).toBeGreaterThanOrEqual(12);
    // Decided meanwhile elsewhere (another tab): Approve says where it stands, without its buttons.
    const { token: jwt } = (await page.evaluate(`JSON.parse(sessionStorage.getItem('convene:session'))`)) as {
      token: string;
    };
    const userCode = new URL(start.body.verificationUriComplete).searchParams.get('code');
    expectOk(
      await h.post('/hub/me/link/approve', {
        headers: { Authorization: `Bearer ${jwt}` },
        body: { userCode },
      }),
    );
    await page.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => page.locator('#link-status').textContent()).toMatch(/^Approved/);
    expect(await page.locator('#link-actions').isHidden()).toBe(true);
    const poll = await h.post('/hub/link/poll', { body: { deviceCode: start.body.deviceCode } });
    expect(poll.body).toMatchObject({ status: 'approved', token: expect.stringMatching(/^usr_/) });

    await page.goto(`${srv.url}/dashboard`);
    await expect.poll(() => page.locator('#tokens tbody tr').count()).toBe(1);
    await page.getByLabel('Name', { exact: true }).fill('laptop');
    await page.getByRole('button', { name: 'Create a token' }).click();
    await expect.poll(() => page.locator('#token-secret').textContent()).toMatch(/^usr_/);
    await expect.poll(() => page.locator('#tokens tbody tr').count()).toBe(2);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Revoke laptop' }).click();
    await expect.poll(() => page.locator('#tokens tr.revoked').count()).toBe(1);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);
});

describe.skipIf(!hasChromium)('the human side when the service asks for a pause (429)', () => {
  const clock = new FakeClock();
  const WINDOW_S = 2;
  const { srv, h } = useServer({ clock, config: { rateLimitMax: 40, rateLimitWindowSeconds: WINDOW_S } });
  const { problems, newPage } = useBrowser();
  const { ownerPage } = pageSteps({ srv, h }, newPage);

  it('says why a send waits, and sends it once the window has passed', async () => {
    const space = await h.createSpace({ name: 'Busy', description: 'too many requests', ownerName: 'Ida' });
    const page = await ownerPage(space);

    // Another client with the same key uses up its window (the clock stands still meanwhile).
    while ((await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey })).status !== 429);
    await page.getByLabel('Message', { exact: true }).fill('sent after the pause');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.locator('#service-notice').textContent())
      .toBe(
        `Too many requests from this tab: the service asks it to wait ${WINDOW_S} s before trying again.`,
      );
    expect(await page.getByRole('button', { name: 'Send' }).isDisabled()).toBe(true);

    clock.advance(WINDOW_S * 1000);
    await expect.poll(() => page.locator('#messages .message').count(), { timeout: 15_000 }).toBe(1);
    await expect.poll(() => page.locator('#service-notice').isHidden()).toBe(true);
    expect(await page.locator('#messages .message-body').textContent()).toBe('sent after the pause');
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);
});
