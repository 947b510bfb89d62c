import type { Locator, Page, Request } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { expectOk, type SpaceFixture, useServer } from './helpers';
import { signup, startLink } from './helpers/accounts';
import { hasChromium, useBrowser } from './helpers/browser';
import { focused, fromEnd, pageSteps, pasteKey, signUpInPage, storedCredentials } from './helpers/pages';

/** The contrast ratio of two CSS rgb() colours (WCAG 2). */
function contrast(...colors: [string, string]): number {
  const [light, dark] = colors
    .map((color) => {
      const [r = 0, g = 0, b = 0] = (color.match(/\d+/g) ?? []).map((c) => {
        const v = Number(c) / 255;
        return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    })
    .sort((a, b) => b - a);
  return ((light ?? 0) + 0.05) / ((dark ?? 0) + 0.05);
}

type Talk = SpaceFixture & { agentKey: string };

// What an outside human's trial of the pages found (session 24), each checked in a real browser.
/**
 * Scrolls a message log to its top as a reader would, once its images have loaded and after the
 * page has heard the scroll: an avatar loading in between, while the page still believed the
 * reader at the end, took the log back there (the page keeps a following reader at the end).
 */
async function scrollToTop(list: Locator): Promise<void> {
  await list.evaluate((node) =>
    Promise.all(
      [...node.querySelectorAll('img')].map((img) =>
        img.complete
          ? undefined
          : new Promise((resolve) => {
              img.addEventListener('load', resolve, { once: true });
              img.addEventListener('error', resolve, { once: true });
            }),
      ),
    ),
  );
  // Heard after the page's own scroll listener, which was added first.
  await list.evaluate(
    (node) =>
      new Promise<void>((resolve) => {
        if (node.scrollTop === 0) return resolve();
        node.addEventListener('scroll', () => resolve(), { once: true });
        node.scrollTop = 0;
      }),
  );
}

describe.skipIf(!hasChromium)('the pages as a human found them', () => {
  const { srv, h } = useServer();
  const { problems, newPage } = useBrowser();
  const { editingParticipant, joinedPage, joinThroughTheLink, ownerPage } = pageSteps({ srv, h }, newPage);

  /** An agent of the space says something (a message of the reader's own would take them to it). */
  const say = async (space: Talk, content: string, type = 'text') => {
    const sent = await h.post(`/hub/space/${space.spaceId}/messages`, {
      key: space.agentKey,
      body: { content, type },
    });
    expect(sent.status, sent.text).toBe(200);
  };

  /** The owner's page of a new space where an agent already said `count` things, live and at its end. */
  async function ownerReading(count: number): Promise<{ page: Page; space: Talk }> {
    const created = await h.createSpace({ name: 'Long talk', description: 'many messages' });
    const space = { ...created, agentKey: (await h.joinActive(created, { name: 'Agent' })).key };
    for (let i = 1; i <= count; i++) await say(space, `message ${i}`);
    const page = await ownerPage(space);
    await expect.poll(() => page.locator('#messages .message').count()).toBe(count);
    return { page, space };
  }

  it('says that a join link whose id is no UUID names no space, without asking the API', async () => {
    const page = await newPage();
    const api: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/hub/')) api.push(request.url());
    });
    const response = await page.goto(`${srv.url}/join/not-a-uuid#key=inv_whatever`);
    expect(response?.status()).toBe(404);
    // JSON, as every 4xx (never HTML), in words a human reads in the browser's window.
    expect(response?.headers()['content-type']).toMatch(/^application\/json/);
    expect(await response?.json()).toEqual({
      error: 'No space has this address. Check the link you were given: a space’s address ends with its id.',
      code: 'not_found',
    });
    expect(api).toEqual([]);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('keeps a reader at the end of the list when an image loads after the list went there', async () => {
    const { page, space } = await ownerReading(30);
    // At the end once the frame after the backlog came (the list goes there once a frame).
    await expect.poll(() => fromEnd(page)).toBeLessThan(2);
    // A tall image, answered only once the page has scrolled to the message that holds it.
    const png = await page.screenshot({ clip: { x: 0, y: 0, width: 400, height: 300 } });
    await page.route('https://images.test/**', async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 800));
      await route.fulfill({ contentType: 'image/png', body: png });
    });
    await say(space, 'https://images.test/tall.png', 'image');
    const image = page.locator('#messages .message[data-type=image] .message-body img');
    await expect
      .poll(() => image.evaluate((img) => (img as { naturalHeight?: number }).naturalHeight))
      .toBe(300);
    await expect.poll(() => fromEnd(page)).toBeLessThan(2);
    // Still following: the next message shows too.
    await say(space, 'after the image');
    await expect.poll(() => page.locator('#messages .message').count()).toBe(32);
    await expect.poll(() => fromEnd(page)).toBeLessThan(2);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('says how many messages came below while the reader was up the list, and takes them there', async () => {
    const { page, space } = await ownerReading(30);
    const list = page.locator('#message-log');
    await scrollToTop(list);
    const more = page.locator('#new-messages');
    expect(await more.isHidden()).toBe(true);
    for (const n of [1, 2, 3]) await say(space, `while you read ${n}`);
    await expect.poll(() => page.locator('#messages .message').count()).toBe(33);
    await expect.poll(() => more.textContent()).toBe('3 new messages below');
    expect(await list.evaluate((node) => node.scrollTop)).toBe(0);
    await page.getByRole('button', { name: '3 new messages below' }).click();
    await expect.poll(() => fromEnd(page)).toBeLessThan(2);
    expect(await more.isHidden()).toBe(true);
    // Scrolling down by hand catches up too.
    await scrollToTop(list);
    await say(space, 'one more');
    await expect.poll(() => more.textContent()).toBe('1 new message below');
    await list.evaluate((node) => {
      node.scrollTop = node.scrollHeight;
    });
    await expect.poll(() => more.isHidden()).toBe(true);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('never cuts a long paste short: it says how long the message is and refuses to send it past the limit', async () => {
    const { page, space } = await ownerReading(0);
    const box = page.getByLabel('Message', { exact: true });
    const counter = page.locator('#message-count');
    await box.focus();
    await page.keyboard.insertText('x'.repeat(70_000));
    expect(await box.inputValue()).toHaveLength(70_000);
    expect(await counter.textContent()).toBe('70,000 / 65,536 characters');
    expect(await counter.getAttribute('class')).toContain('over');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.locator('#send-notice').textContent())
      .toBe('This message is 70,000 characters; the limit is 65,536. Shorten it, or send it in parts.');
    expect(await box.inputValue()).toHaveLength(70_000);
    // As many characters as the service takes, counted as it counts them (an emoji is one).
    const emoji = '\u{1F600}'.repeat(65_536);
    await box.fill(emoji);
    expect(await counter.textContent()).toBe('65,536 / 65,536 characters');
    expect(await counter.getAttribute('class')).not.toContain('over');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#messages .message').count()).toBe(1);
    const sent = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    expect(sent.body.messages.map((m: { content: string }) => m.content)).toEqual([emoji]);
    expect(await counter.isHidden()).toBe(true);
    expect(await page.locator('#send-notice').isHidden()).toBe(true);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('shows the bidi controls of an agent asking to be linked, which could disguise its name', async () => {
    const human = await signup(h, { name: 'Lin' });
    const link = await startLink(h, 'Research agent <b>bold</b> \u202Eevil');
    const page = await newPage();
    // Logged in in this tab, as the login page leaves it.
    await page.addInitScript(
      `sessionStorage.setItem('convene:session', ${JSON.stringify(
        JSON.stringify({ token: human.jwt, user: { id: human.id, email: human.email, name: 'Lin' } }),
      )})`,
    );
    await page.goto(link.verificationUriComplete);
    const agent = page.locator('#link-agent');
    await expect.poll(() => agent.textContent()).toBe('Research agent <b>bold</b> [U+202E]evil');
    // Set apart from the sentence around it.
    expect(await agent.locator('bdi').count()).toBe(1);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('shows the bidi controls in names, roles, documents and messages instead of obeying them', async () => {
    const space = await h.createSpace({ name: 'Mirror', description: 'names that turn around' });
    const name = 'Mallory\u202Egnp.exe';
    const agent = await h.joinActive(space, { name, role: 'signer\u200F' });
    const post = (content: string, type: string) =>
      h.post(`/hub/space/${space.spaceId}/messages`, { key: agent.key, body: { content, type } });
    expect((await post('see \u202Eevil override text gnp.exe', 'text')).status).toBe(200);
    // Marks stay in a message (right-to-left writing needs them); a <bdo> overrides nothing.
    expect((await post('<p>\u2067html\u2069 \u200Fmark</p><bdo dir="rtl">abc</bdo>', 'html')).status).toBe(
      200,
    );
    await h.createArtifact(space, 'plan\u202Etxt.exe', 'x', agent.key);
    const page = await ownerPage(space);
    await expect.poll(() => page.locator('#messages .message').count()).toBe(2);

    const person = page.locator('#participants li', { hasText: 'Mallory' });
    expect(await person.locator('.person-name bdi').textContent()).toBe('Mallory[U+202E]gnp.exe');
    expect(await person.locator('.person-role').textContent()).toBe('signer[U+200F]');
    const [text, html] = await page.locator('#messages .message').all();
    expect(await text!.locator('.message-head bdi').textContent()).toBe('Mallory[U+202E]gnp.exe');
    expect(await text!.locator('.message-body').textContent()).toBe('see [U+202E]evil override text gnp.exe');
    expect(await html!.locator('.message-body p').textContent()).toBe('[U+2067]html[U+2069] \u200Fmark');
    expect(
      await html!
        .locator('bdo')
        .evaluate((node) => node.ownerDocument.defaultView?.getComputedStyle(node).unicodeBidi),
    ).toBe('isolate');
    expect(await page.locator('#artifacts bdi').textContent()).toBe('plan[U+202E]txt.exe');
    // What is stored is what was sent.
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect(view.body.participants.map((p: { name: string }) => p.name)).toContain(name);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('takes back "cannot be reached" under a send and a save once the page reaches the service again', async () => {
    const { page, space } = await ownerReading(0);
    const artifactId = await h.createArtifact(space, 'minutes', 'draft\n');
    await page.locator(`#artifacts button[data-artifact-id="${artifactId}"]`).click();
    await page.getByRole('button', { name: 'Lock and edit' }).click();
    await page.locator('#artifact-editor').fill('edited offline\n');

    const unreachable = 'The service cannot be reached; check your connection and try again.';
    // The network goes: the open stream with it, and every request after.
    await page.context().setOffline(true);
    srv.server.app.server.closeAllConnections();
    try {
      await expect.poll(() => page.locator('#live').textContent(), { timeout: 15_000 }).not.toBe('live');
      await page.getByLabel('Message', { exact: true }).fill('sent offline');
      await page.keyboard.press('Enter');
      // A browser's fetch cannot tell a request refused from one whose answer was lost: the send
      // may have reached the service, and says what to look for.
      await expect
        .poll(() => page.locator('#send-notice').textContent(), { timeout: 15_000 })
        .toBe(
          `${unreachable} If the message reached the service before that, it shows above; sending it again as it is cannot post it twice.`,
        );
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await expect
        .poll(() => page.locator('#artifact-notice').textContent(), { timeout: 15_000 })
        .toBe(unreachable);
    } finally {
      await page.context().setOffline(false);
    }
    await expect.poll(() => page.locator('#live').textContent(), { timeout: 15_000 }).toBe('live');
    await expect.poll(() => page.locator('#send-notice').isHidden()).toBe(true);
    expect(await page.locator('#artifact-notice').isHidden()).toBe(true);
    // The message and the draft wait to be sent and saved.
    expect(await page.getByLabel('Message', { exact: true }).inputValue()).toBe('sent offline');
    expect(await page.locator('#artifact-editor').inputValue()).toBe('edited offline\n');
    await page.close();
    // The browser reports the stream cut off and each request the network refused; nothing else
    // may go wrong.
    expect(
      problems.filter((p) => !/net::ERR_(INTERNET_DISCONNECTED|INCOMPLETE_CHUNKED_ENCODING)/.test(p)),
    ).toEqual([]);
  }, 90_000);

  it('keeps the version of the document being edited in step with the writes of others', async () => {
    const space = await h.createSpace({ name: 'Versions', description: 'two writers', ownerName: 'Olga' });
    const { page, lockPath, artifactId } = await editingParticipant(space, 'Ed');
    await page.locator('#artifact-editor').fill('my draft\n');
    // The owner takes the lock and writes version 2 while Ed's draft is open.
    expect((await h.delete(lockPath, { key: space.ownerKey })).status).toBe(200);
    expect((await h.post(lockPath, { key: space.ownerKey })).status).toBe(200);
    const write = await h.patch(`/hub/space/${space.spaceId}/artifact/${artifactId}`, {
      key: space.ownerKey,
      body: { content: 'owner text\n' },
    });
    expect(write.status, write.text).toBe(200);
    await expect
      .poll(() => page.locator('#artifact-meta').textContent())
      .toMatch(/^Version 2 \(your draft started from version 1\) · updated by Olga /);
    expect(
      await page.locator(`#artifacts button[data-artifact-id="${artifactId}"] .badge`).last().textContent(),
    ).toBe('v2');
    expect(await page.locator('#artifact-editor').inputValue()).toBe('my draft\n');
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('counts the time left down by the second', async () => {
    const space = await h.createSpace({ name: 'Short', description: 'ends soon', ttl: 80 });
    const page = await ownerPage(space);
    const secondsLeft = async () =>
      Number((await page.locator('#space-ttl').textContent())?.match(/(\d+) s left/)?.[1]);
    const first = await secondsLeft();
    expect(first).toBeGreaterThan(60);
    await expect.poll(secondsLeft, { timeout: 5_000 }).toBeLessThanOrEqual(first - 2);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('closes the composer and "New document" to a muted, removed or closed-out human, saying why', async () => {
    const space = await h.createSpace({ name: 'Moderated', description: 'the owner decides' });
    const artifactId = await h.createArtifact(space, 'rules', 'be kind\n');
    const page = await joinedPage(space, 'Mia');
    const mia = await storedCredentials(page, space.spaceId);
    const moderate = async (action: string) =>
      expect(
        (
          await h.post(`/hub/space/${space.spaceId}/participants/${mia.participantId}/${action}`, {
            key: space.ownerKey,
          })
        ).status,
      ).toBe(200);
    const box = page.getByLabel('Message', { exact: true });
    const hello = page.locator('#messages .empty .hello');
    await expect.poll(() => hello.isVisible()).toBe(true);
    await page.locator(`#artifacts button[data-artifact-id="${artifactId}"]`).click();
    const lock = page.getByRole('button', { name: 'Lock and edit' });
    await lock.waitFor();

    await moderate('mute');
    await expect.poll(() => box.isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Send' }).isDisabled()).toBe(true);
    expect(await page.locator('#send-notice').textContent()).toBe(
      'The owner has muted you: you can read, but not send.',
    );
    expect(await hello.isVisible()).toBe(false);
    expect(await lock.isDisabled()).toBe(true);
    await page.getByText('New document').click();
    expect(await page.getByLabel('Name', { exact: true }).isDisabled()).toBe(true);
    expect(
      await page
        .getByText('The owner has muted you: you can create a document once they unmute you.')
        .isVisible(),
    ).toBe(true);

    // Unmuted, all of it opens again; a reload while muted would have found it closed too.
    await moderate('unmute');
    await expect.poll(() => box.isEnabled()).toBe(true);
    expect(await page.getByLabel('Name', { exact: true }).isEnabled()).toBe(true);
    expect(await lock.isEnabled()).toBe(true);
    expect(await page.locator('#send-notice').isHidden()).toBe(true);
    await moderate('mute');
    await expect.poll(() => box.isDisabled()).toBe(true);
    await page.reload();
    await expect.poll(() => page.locator('#live').textContent()).toBe('live');
    expect(await box.isDisabled()).toBe(true);
    expect(await page.locator('#send-notice').textContent()).toBe(
      'The owner has muted you: you can read, but not send.',
    );

    await moderate('kick');
    await expect
      .poll(() => page.locator('#space-notice').textContent())
      .toBe('The owner removed you from this space.');
    expect(await box.isDisabled()).toBe(true);
    expect(await hello.isVisible()).toBe(false);

    // The owner who closes the space is told it was them.
    const owner = await ownerPage(space);
    owner.once('dialog', (dialog) => void dialog.accept());
    await owner.getByRole('button', { name: 'Close the space' }).click();
    await expect.poll(() => owner.locator('#space-notice').textContent()).toBe('You closed this space.');
    expect(await owner.getByLabel('Message', { exact: true }).isDisabled()).toBe(true);
    expect(await owner.locator('#messages .empty').textContent()).toBe('No messages yet. Say hello.');
    expect(await owner.locator('#messages .empty .hello').isVisible()).toBe(false);
    await owner.close();
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('lets Enter write a new line on a touch screen, where Send sends', async () => {
    const space = await h.createSpace({ name: 'Phone', description: 'a soft keyboard' });
    const page = await newPage();
    // A phone's pointer: coarse.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 1 });
    await pasteKey(page, srv.url, space.spaceId, space.ownerKey);
    await expect.poll(() => page.locator('#live').textContent()).toBe('live');
    const box = page.getByLabel('Message', { exact: true });
    expect(await box.getAttribute('placeholder')).toBe('Write a message');
    await box.focus();
    await page.keyboard.type('line 1');
    await page.keyboard.press('Enter');
    await page.keyboard.type('line 2');
    expect(await box.inputValue()).toBe('line 1\nline 2');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.locator('#messages .message-body').textContent()).toBe('line 1\nline 2');
    const sent = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
    expect(sent.body.messages.map((m: { content: string }) => m.content)).toEqual(['line 1\nline 2']);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('takes the keyboard to the message box on joining, names the log, and keeps html headings inside messages', async () => {
    const space = await h.createSpace({ name: 'Accessible', description: 'for every reader' });
    const page = await joinedPage(space, 'Ada');
    await expect.poll(() => focused(page)).toBe('message-content');
    const log = page.getByRole('log', { name: 'Messages' });
    expect(await log.getAttribute('tabindex')).toBe('0');
    // The "open" badge reads at 4.5:1 at least (WCAG AA for its small text).
    const badge = page.locator('#space-state');
    expect(await badge.textContent()).toBe('open');
    const [color, background] = await badge.evaluate((node) => {
      const style = node.ownerDocument.defaultView?.getComputedStyle(node);
      return [style?.color ?? '', style?.backgroundColor ?? ''] as [string, string];
    });
    expect(contrast(color, background)).toBeGreaterThanOrEqual(4.5);

    const sent = await h.post(`/hub/space/${space.spaceId}/messages`, {
      key: space.ownerKey,
      body: { content: '<h1>Big heading</h1><h4>Small heading</h4><p>text</p>', type: 'html' },
    });
    expect(sent.status, sent.text).toBe(200);
    await expect.poll(() => log.locator('h1').count()).toBe(1);
    // Kept as written, but under the page's "Messages" (h2), not beside its title: the levels as
    // Chromium gives them to a screen reader (Playwright's roles read the tag alone).
    const cdp = await page.context().newCDPSession(page);
    const { nodes } = await cdp.send('Accessibility.getFullAXTree');
    const headings = Object.fromEntries(
      nodes
        .filter((node) => node.role?.value === 'heading')
        .map((node) => [node.name?.value, node.properties?.find((p) => p.name === 'level')?.value.value]),
    );
    expect(headings).toMatchObject({ Accessible: 1, Messages: 2, 'Big heading': 3, 'Small heading': 6 });
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('lets a human keep access after the tab closes: a link back, or this device remembering the key', async () => {
    const space = await h.createSpace({ name: 'Come back', description: 'a tab closes' });
    const page = await newPage();
    const invite = await h.post(`/hub/space/${space.spaceId}/invite`, { key: space.ownerKey });
    await page.goto(invite.body.humanLink);
    // Said before joining.
    await page
      .getByText('Your key to the space is kept in this tab only: closing the tab ends your access')
      .waitFor();
    await joinThroughTheLink(page, space, 'Ada');
    await page.waitForURL(`${srv.url}/space/${space.spaceId}`);
    await expect.poll(() => page.locator('#live').textContent()).toBe('live');
    const ada = await storedCredentials(page, space.spaceId);

    await page.getByText('Keep access after this tab closes').click();
    // Filled by the details' toggle event, which fires a task after the click.
    const linkBack = () => page.getByLabel('Your link back', { exact: true }).inputValue();
    // The key travels in the fragment, which no request carries, never in the query.
    await expect
      .poll(linkBack)
      .toBe(`${srv.url}/space/${space.spaceId}#key=${ada.key}&participant=${ada.participantId}`);
    const link = await linkBack();
    expect(await page.getByLabel('Your key', { exact: true }).inputValue()).toBe(ada.key);

    /** A new tab of this browser opening the space at `url`, once it is live or asks for a key. */
    const newTab = async (url: string) => {
      const tab = await newPage();
      await tab.goto(url);
      const state = async () =>
        (await tab.locator('#no-key').isVisible()) ? 'no key' : await tab.locator('#live').textContent();
      await expect.poll(state).toMatch(/^(live|no key)$/);
      return tab;
    };
    const back = await newTab(link);
    expect(await back.locator('#live').textContent()).toBe('live');
    expect(back.url()).toBe(`${srv.url}/space/${space.spaceId}`);
    // Whose key it is, the space says (getSpace's `you`): its name too.
    expect(await storedCredentials(back, space.spaceId)).toEqual({
      ...ada,
      role: 'participant',
      name: 'Ada',
    });
    expect(await back.locator('#participants .person-name', { hasText: '(you)' }).textContent()).toBe(
      'Ada (you)',
    );
    await back.close();

    // Without the link, a new tab holds no key, until this device remembers it.
    const bare = `${srv.url}/space/${space.spaceId}`;
    let tab = await newTab(bare);
    expect(await tab.locator('#no-key').isVisible()).toBe(true);
    await tab.close();
    await page.getByRole('button', { name: 'Remember on this device' }).click();
    await page.getByText('This browser remembers your key for this space, in every tab.').waitFor();
    tab = await newTab(bare);
    expect(await tab.locator('#live').textContent()).toBe('live');
    await tab.close();
    await page.getByRole('button', { name: 'Forget it' }).click();
    tab = await newTab(bare);
    expect(await tab.locator('#no-key').isVisible()).toBe(true);
    await tab.close();

    // A key that opens nothing any more is not kept on the device.
    await page.getByRole('button', { name: 'Remember on this device' }).click();
    const remembered = () => page.evaluate(`localStorage.getItem('convene:space:${space.spaceId}')`);
    expect(await remembered()).not.toBeNull();
    const kick = await h.post(`/hub/space/${space.spaceId}/participants/${ada.participantId}/kick`, {
      key: space.ownerKey,
    });
    expect(kick.status).toBe(200);
    await expect.poll(remembered).toBeNull();
    expect(await page.locator('#keep-access').isHidden()).toBe(true);
    await page.close();
    expect(problems).toEqual([]);
  }, 90_000);

  it('creates an empty document, as the API and the CLI do', async () => {
    const space = await h.createSpace({ name: 'Blank', description: 'a document to fill later' });
    const page = await ownerPage(space);
    await page.getByText('New document').click();
    await page.getByLabel('Name', { exact: true }).fill('later');
    await page.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => page.locator('#artifact-title').textContent()).toBe('later');
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect(view.body.artifacts).toMatchObject([{ name: 'later', version: 1 }]);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  // What an outside human's trial of the pages found (session 30).
  it('keeps an unsaved draft on screen, read-only, when the space closes while it is edited', async () => {
    const space = await h.createSpace({ name: 'Closing', description: 'closed mid-edit', ownerName: 'Olga' });
    const { page } = await editingParticipant(space, 'Dave');
    const editor = page.locator('#artifact-editor');
    await editor.fill('words not saved yet\n');
    expect((await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey })).status).toBe(200);
    await expect.poll(() => page.locator('#space-notice').textContent()).toBe('The owner closed this space.');
    expect(await editor.isVisible()).toBe(true);
    expect(await editor.inputValue()).toBe('words not saved yet\n');
    expect(await editor.isEditable()).toBe(false);
    expect(await page.locator('#artifact-notice').textContent()).toBe(
      'This document can no longer be saved here. Your unsaved text is still below: copy it to keep it.',
    );
    // Closing released the lock: the page no longer says it is this tab's.
    expect(await page.locator('#artifact-meta').textContent()).not.toContain('locked by you');
    expect(await page.getByRole('button', { name: 'Save' }).isHidden()).toBe(true);
    // Putting the document away asks first: the text would be gone.
    const asked = new Promise<string>((resolve) =>
      page.once('dialog', (dialog) => {
        resolve(dialog.message());
        void dialog.dismiss();
      }),
    );
    await page.locator('#artifact-close').click();
    expect(await asked).toBe('Discard your unsaved text?');
    expect(await editor.inputValue()).toBe('words not saved yet\n');
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('brings an open list of versions up to date as others save', async () => {
    const space = await h.createSpace({ name: 'History', description: 'versions while reading' });
    const artifactId = await h.createArtifact(space, 'notes', 'one\n');
    const page = await joinedPage(space, 'Vera');
    await page.locator(`#artifacts button[data-artifact-id="${artifactId}"]`).click();
    await page.locator('#artifact-history-button').click();
    const versions = page.locator('#artifact-versions li strong');
    await expect.poll(() => versions.allTextContents()).toEqual(['Version 1']);
    // A version on view stays on view while the list follows.
    await page.getByRole('button', { name: 'View' }).click();
    await expect.poll(() => page.locator('#artifact-version-view').textContent()).toBe('one\n');
    const path = `/hub/space/${space.spaceId}/artifact/${artifactId}`;
    expect((await h.post(`${path}/lock`, { key: space.ownerKey })).status).toBe(200);
    const write = await h.patch(path, { key: space.ownerKey, body: { content: 'two\n' } });
    expect(write.status, write.text).toBe(200);
    await expect.poll(() => versions.allTextContents()).toEqual(['Version 2', 'Version 1']);
    expect(await page.locator('#artifact-version-view').isVisible()).toBe(true);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('refuses a second document or token of a name already in use, as the CLI does, saying so', async () => {
    const space = await h.createSpace({ name: 'Names', description: 'one of each' });
    await h.createArtifact(space, 'Roadmap', 'v1\n');
    const page = await ownerPage(space);
    await page.getByText('New document').click();
    await page.getByLabel('Name', { exact: true }).fill('roadmap');
    await page.getByRole('button', { name: 'Create' }).click();
    await expect
      .poll(() => page.locator('#artifact-form-notice').textContent())
      .toBe('There is already a document called “Roadmap”: open it from the list, or choose another name.');
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect(view.body.artifacts.map((a: { name: string }) => a.name)).toEqual(['Roadmap']);
    // Another name goes through, and the notice goes.
    await page.getByLabel('Name', { exact: true }).fill('Roadmap 2');
    await page.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => page.locator('#artifact-title').textContent()).toBe('Roadmap 2');
    expect(await page.locator('#artifact-form-notice').isHidden()).toBe(true);

    await page.goto(`${srv.url}/login`);
    await signUpInPage(page, 'Tess');
    await page.waitForURL(`${srv.url}/dashboard`);
    const tokenName = page.getByLabel('Name', { exact: true });
    await tokenName.fill('laptop agent');
    await page.getByRole('button', { name: 'Create a token' }).click();
    await expect.poll(() => page.locator('#tokens tbody tr').count()).toBe(1);
    await tokenName.fill('Laptop Agent');
    await page.getByRole('button', { name: 'Create a token' }).click();
    await expect
      .poll(() => page.locator('#dashboard-notice').textContent())
      .toMatch(
        /^You already have a token called “laptop agent” \(usr_[\w-]+…\): choose another name, or revoke that one first\.$/,
      );
    expect(await page.locator('#tokens tbody tr').count()).toBe(1);
    // On a phone, its row fits: the Revoke button is whole on screen.
    await page.setViewportSize({ width: 390, height: 844 });
    const revoke = await page.getByRole('button', { name: 'Revoke laptop agent' }).boundingBox();
    expect((revoke?.x ?? 0) + (revoke?.width ?? 0)).toBeLessThanOrEqual(390);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('takes a phone’s reader to the notice that says they left, where the button was pressed', async () => {
    const space = await h.createSpace({ name: 'Leaving', description: 'a small screen' });
    const page = await joinedPage(space, 'Lee');
    await page.setViewportSize({ width: 390, height: 844 });
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Leave the space' }).click();
    await expect.poll(() => page.locator('#space-notice').textContent()).toBe('You left this space.');
    expect(await focused(page)).toBe('space-notice');
    const box = await page.locator('#space-notice').boundingBox();
    expect(box?.y ?? -1).toBeGreaterThanOrEqual(0);
    expect((box?.y ?? 9999) + (box?.height ?? 0)).toBeLessThanOrEqual(844);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  // What an outside human's trial of the pages found (session 43).
  it('says in the space notice, within seconds, that the service is out of reach while the stream cannot reconnect', async () => {
    const space = await h.createSpace({ name: 'Stopped', description: 'the server goes away' });
    const { page } = await editingParticipant(space, 'Stan');
    await page.locator('#artifact-editor').fill('kept through the outage\n');
    const notice = page.locator('#space-notice');
    expect(await notice.isHidden()).toBe(true);
    // The server stops: the open stream drops, and every connection after is refused.
    await page.route('**/hub/**', (route) => route.abort('connectionrefused'));
    srv.server.app.server.closeAllConnections();
    const stoppedAt = Date.now();
    await expect.poll(() => notice.isVisible(), { timeout: 15_000 }).toBe(true);
    // Said within a few seconds (the stream tries again at most 2.5 s apart), not after minutes.
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);
    expect(await notice.textContent()).toBe(
      'The service cannot be reached; check your connection and try again. This page reconnects by itself when it can. The document you are editing stays here; saving it may fail until then.',
    );
    expect(await notice.getAttribute('role')).toBe('status');
    expect(await page.locator('#live').textContent()).not.toBe('live');
    // The server is back: the page is live by itself, the notice goes, the draft is still there.
    await page.unroute('**/hub/**');
    await expect.poll(() => page.locator('#live').textContent(), { timeout: 15_000 }).toBe('live');
    expect(await notice.isHidden()).toBe(true);
    expect(await page.locator('#artifact-editor').inputValue()).toBe('kept through the outage\n');
    await page.close();
    // The browser reports each connection the test refused; nothing else may go wrong.
    expect(
      problems.filter((p) => !/net::ERR_(CONNECTION_REFUSED|INCOMPLETE_CHUNKED_ENCODING)/.test(p)),
    ).toEqual([]);
  }, 60_000);

  it('redraws an open list of versions when this tab locks the document, and when it lets it go', async () => {
    const space = await h.createSpace({ name: 'Restore', description: 'history while locking' });
    const artifactId = await h.createArtifact(space, 'notes', 'one\n');
    const path = `/hub/space/${space.spaceId}/artifact/${artifactId}`;
    expectOk(await h.post(`${path}/lock`, { key: space.ownerKey }));
    expectOk(await h.patch(path, { key: space.ownerKey, body: { content: 'two\n' } }));
    expectOk(await h.delete(`${path}/lock`, { key: space.ownerKey }));
    const page = await joinedPage(space, 'Rita');
    await page.locator(`#artifacts button[data-artifact-id="${artifactId}"]`).click();
    await page.locator('#artifact-history-button').click();
    const versions = page.locator('#artifact-versions li strong');
    await expect.poll(() => versions.allTextContents()).toEqual(['Version 2', 'Version 1']);
    const restore = page.getByRole('button', { name: 'Restore' });
    expect(await restore.count()).toBe(0);
    // Locked: the version that is not the current one can be restored, without reopening History.
    await page.getByRole('button', { name: 'Lock and edit' }).click();
    await expect.poll(() => restore.count()).toBe(1);
    expect(await page.locator('#artifact-history').isVisible()).toBe(true);
    // Done editing: Restore goes with the lock.
    await page.getByRole('button', { name: 'Done editing' }).click();
    await expect.poll(() => restore.count()).toBe(0);
    // Locked again, then the owner takes the lock away: Restore goes too.
    await page.getByRole('button', { name: 'Lock and edit' }).click();
    await expect.poll(() => restore.count()).toBe(1);
    expectOk(await h.delete(`${path}/lock`, { key: space.ownerKey }));
    expectOk(await h.post(`${path}/lock`, { key: space.ownerKey }));
    await expect
      .poll(() => page.locator('#artifact-notice').textContent())
      .toMatch(/^You no longer hold the lock/);
    await expect.poll(() => restore.count()).toBe(0);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('closes Download and History with Lock once the space ends for the tab, keeping the hint about the draft', async () => {
    const space = await h.createSpace({ name: 'Removed', description: 'kicked mid-edit', ownerName: 'Olga' });
    const { page } = await editingParticipant(space, 'Kurt');
    await page.locator('#artifact-history-button').click();
    await expect.poll(() => page.locator('#artifact-versions li').count()).toBe(1);
    await page.locator('#artifact-editor').fill('not saved yet\n');
    const kurt = await storedCredentials(page, space.spaceId);
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${kurt.participantId}/kick`, {
        key: space.ownerKey,
      }),
    );
    await expect
      .poll(() => page.locator('#space-notice').textContent())
      .toBe('The owner removed you from this space.');
    const hint =
      'This document can no longer be saved here. Your unsaved text is still below: copy it to keep it.';
    expect(await page.locator('#artifact-notice').textContent()).toBe(hint);
    for (const name of ['Lock and edit', 'Download', 'History', 'View version 1'])
      expect(await page.getByRole('button', { name, exact: true }).isDisabled(), name).toBe(true);
    // Nothing asks the API with the dead key, so nothing takes the hint's place.
    await page.locator('#artifact-download').click({ force: true });
    await page.locator('#artifact-history-button').click({ force: true });
    expect(await page.locator('#artifact-notice').textContent()).toBe(hint);
    expect(await page.locator('#artifact-editor').inputValue()).toBe('not saved yet\n');
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('asks the owner to refuse a join request, not to remove someone who never was in', async () => {
    const space = await h.createSpace({ name: 'Door', description: 'by approval', privacy: 'private' });
    const eve = await h.joinPending(space, { name: 'Eve', isHuman: true });
    const owner = await ownerPage(space);
    const asked = new Promise<string>((resolve) =>
      owner.once('dialog', (dialog) => {
        resolve(dialog.message());
        void dialog.accept();
      }),
    );
    await owner.getByRole('button', { name: 'Refuse Eve' }).click();
    expect(await asked).toBe('Refuse Eve’s request to join the space?');
    await expect.poll(() => owner.getByRole('button', { name: 'Refuse Eve' }).count()).toBe(0);
    const status = await h.get(`/hub/space/${space.spaceId}/join/${eve.participantId}`, {
      key: eve.invitationKey,
      headers: { 'X-Poll-Token': eve.pollToken },
    });
    expect(status.body.code, status.text).toBe('join_refused');
    // Never in the space, Eve leaves the list rather than being listed as removed (trial s71),
    // and the owner is told, so that she does not just vanish.
    await expect
      .poll(() => owner.locator('#space-notice').textContent())
      .toBe('Eve’s request to join was refused.');
    await expect.poll(() => owner.locator('#participants').getByText('Eve').count()).toBe(0);
    // Someone who took part and was removed stays listed, as removed.
    const mallory = await h.joinActive(space, { name: 'Mallory' });
    expectOk(await h.get(`/hub/space/${space.spaceId}`, { key: mallory.key }));
    // Presence is written in batches: seen before she is removed.
    await expect
      .poll(async () => {
        const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
        return view.body.participants.find((p: { name: string }) => p.name === 'Mallory').lastSeenAt;
      })
      .toBeDefined();
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${mallory.participantId}/kick`, {
        key: space.ownerKey,
      }),
    );
    const listed = owner.locator('#participants li', { hasText: 'Mallory' });
    await expect.poll(() => listed.locator('.badge.kicked').textContent()).toBe('removed');

    // Admitted from another of the owner's tabs just before this tab's refusal arrives: they stay.
    const ada = await h.joinPending(space, { name: 'Ada', isHuman: true });
    await owner.route('**/participants/*/kick', async (route) => {
      expectOk(
        await h.post(`/hub/space/${space.spaceId}/participants/${ada.participantId}/approve`, {
          key: space.ownerKey,
        }),
      );
      await route.continue();
    });
    owner.once('dialog', (dialog) => void dialog.accept());
    await owner.getByRole('button', { name: 'Refuse Ada' }).click();
    await expect
      .poll(() => owner.locator('#space-notice').textContent())
      .toBe('Not possible right now: cannot refuse a participant who is already active.');
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    expect(view.body.participants.find((p: { name: string }) => p.name === 'Ada').status).toBe('active');
    await owner.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('keeps waiting for the same join request when its link is opened again after the tab closed', async () => {
    const space = await h.createSpace({
      name: 'Waiting room',
      description: 'by approval',
      privacy: 'private',
    });
    const first = await newPage();
    const { humanLink } = await joinThroughTheLink(first, space, 'Walter');
    const waiting = (page: Page) => page.getByRole('heading', { name: 'Waiting for approval' });
    await waiting(first).waitFor();
    await first.close();

    const again = await newPage();
    await again.goto(humanLink);
    await waiting(again).waitFor();
    expect(await again.locator('#join-section').isHidden()).toBe(true);
    // The browser keeps the request, never a key in the address.
    expect(again.url()).toBe(`${srv.url}/join/${space.spaceId}`);
    const view = await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey });
    const walters = view.body.participants.filter((p: { name: string }) => p.name === 'Walter');
    expect(walters).toHaveLength(1);
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${walters[0].participantId}/approve`, {
        key: space.ownerKey,
      }),
    );
    await again.waitForURL(`${srv.url}/space/${space.spaceId}`, { timeout: 15_000 });
    await expect.poll(() => again.locator('#live').textContent()).toBe('live');
    expect(await storedCredentials(again, space.spaceId)).toMatchObject({
      participantId: walters[0].participantId,
      name: 'Walter',
    });
    // Let in, the request is forgotten: the link opens the form again, to join anew.
    expect(
      await again.evaluate(`Object.keys(localStorage).filter((k) => k.startsWith('convene:invite:'))`),
    ).toEqual([]);
    await again.goto(humanLink);
    await again.locator('#join-section').waitFor();

    // Refused, it is forgotten too.
    const refused = await newPage();
    const { humanLink: wandasLink } = await joinThroughTheLink(refused, space, 'Wanda');
    await waiting(refused).waitFor();
    await refused.close();
    const wanda = (
      await h.get(`/hub/space/${space.spaceId}`, { key: space.ownerKey })
    ).body.participants.find((p: { name: string }) => p.name === 'Wanda');
    expectOk(
      await h.post(`/hub/space/${space.spaceId}/participants/${wanda.participantId}/kick`, {
        key: space.ownerKey,
      }),
    );
    const reopened = await newPage();
    await reopened.goto(wandasLink);
    await expect
      .poll(() => reopened.locator('#join-notice').textContent(), { timeout: 10_000 })
      .toBe('The owner did not let you in. Ask them for a new invitation if you think this is a mistake.');
    const anew = await newPage();
    await anew.goto(wandasLink);
    await anew.locator('#join-section').waitFor();
    await again.close();
    await reopened.close();
    await anew.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('shows the error of a bad image address where the eye is, on a desk', async () => {
    const { page } = await ownerReading(12);
    await page.getByLabel('Message type').selectOption('image');
    await page.getByLabel('Message', { exact: true }).fill('http://images.test/cat.png');
    await page.keyboard.press('Enter');
    const notice = page.locator('#send-notice');
    await expect.poll(() => notice.isVisible()).toBe(true);
    // Inside the 1280×900 window, not below it.
    await expect
      .poll(async () => {
        const box = await notice.boundingBox();
        return box !== null && box.y >= 0 && box.y + box.height <= 900;
      })
      .toBe(true);
    expect(await focused(page)).toBe('message-content');
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('keeps the list at its newest message when the window is resized, as a phone turning', async () => {
    const { page } = await ownerReading(30);
    await expect.poll(() => fromEnd(page)).toBeLessThan(2);
    for (const [width, height] of [
      [1280, 600],
      [390, 844],
      [844, 390],
      [1280, 900],
    ] as const) {
      await page.setViewportSize({ width, height });
      await expect.poll(() => fromEnd(page), { message: `${width}×${height}` }).toBeLessThan(2);
    }
    // A reader up the list stays where they are.
    await scrollToTop(page.locator('#message-log'));
    await page.setViewportSize({ width: 1280, height: 700 });
    await expect.poll(() => page.locator('#message-log').evaluate((log) => log.scrollTop)).toBe(0);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  describe('with a clock the test moves', () => {
    // The clock is the browser context's: this describe has its own.
    const clocked = useBrowser();
    const steps = pageSteps({ srv, h }, clocked.newPage);

    it('lets the lock of an editor nobody types in lapse, saying so first, and warns before a draft is left', async () => {
      await clocked.context.clock.install();
      const space = await h.createSpace({ name: 'Idle', description: 'an editor left open' });
      const { page, lockPath } = await steps.editingParticipant(space, 'Idris');
      const renewals: string[] = [];
      const answered: string[] = [];
      const isRenewal = (request: Request) => request.url().endsWith(`${lockPath}/heartbeat`);
      page.on('request', (request) => {
        if (isRenewal(request)) renewals.push(request.url());
      });
      page.on('requestfinished', (request) => {
        if (isRenewal(request)) answered.push(request.url());
      });
      const editor = page.locator('#artifact-editor');
      const notice = page.locator('#artifact-notice');
      await editor.fill('a draft\n');

      // Four minutes on, the lock is renewed as before (every third of its 10 minutes).
      await page.clock.fastForward('04:00');
      await expect.poll(() => renewals.length).toBe(1);
      // Answered before the clock jumps again: a jump past the SDK's timeout of a renewal still on
      // its way would abort it and send it again (a second renewal no idle editor asked for).
      await expect.poll(() => answered.length).toBe(1);
      // Eight minutes without a keystroke: not renewed, and the page says when it lapses.
      await page.clock.fastForward('04:00');
      await expect
        .poll(() => notice.textContent())
        .toMatch(
          /^You have not edited for 5 minutes, so your lock is no longer renewed: it lapses at .+ unless you type\.$/,
        );
      expect(renewals).toHaveLength(1);
      // Typing keeps it, at once.
      await editor.press('End');
      await page.keyboard.type('more');
      await expect.poll(() => renewals.length).toBe(2);
      expect(await notice.isHidden()).toBe(true);

      // Leaving with the draft unsaved asks first.
      const asked = new Promise<string>((resolve) =>
        page.once('dialog', (dialog) => {
          resolve(dialog.type());
          void dialog.dismiss();
        }),
      );
      await page.close({ runBeforeUnload: true });
      expect(await asked).toBe('beforeunload');
      await page.close();
      expect(clocked.problems).toEqual([]);
    }, 60_000);
  });
});
