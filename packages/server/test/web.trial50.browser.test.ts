import { describe, expect, it } from 'vitest';
import { expectOk, useServer } from './helpers';
import { mintToken, signup } from './helpers/accounts';
import { hasChromium, useBrowser } from './helpers/browser';
import { focused, logInToDashboard, pageSteps, pasteKey, storedCredentials } from './helpers/pages';

const PHONE = { width: 390, height: 844 };

// What a human's trial of the pages in Chromium found in session 50, on a desk and on a phone.
describe.skipIf(!hasChromium)('the pages as a human found them (session 50)', () => {
  const { srv, h } = useServer();
  const { problems, newPage } = useBrowser();
  const { editingParticipant, ownerPage } = pageSteps({ srv, h }, newPage);

  /** The owner says `content` as an html message. */
  const sayHtml = async (space: { spaceId: string; ownerKey: string }, content: string) => {
    const sent = await h.post(`/hub/space/${space.spaceId}/messages`, {
      key: space.ownerKey,
      body: { content, type: 'html' },
    });
    expect(sent.status, sent.text).toBe(200);
  };

  it('keeps a wide table or long preformatted lines inside their bubble, scrolling there, words whole', async () => {
    const space = await h.createSpace({ name: 'Wide', description: 'tables and code' });
    await sayHtml(
      space,
      '<table><tr><th>Name</th><th>Status</th><th>Notes</th><th>Owner</th><th>Due</th></tr><tr><td>Release 2.0 planning</td><td>in progress</td><td>Waiting on the security review of the new login flow</td><td>Olga</td><td>2026-12-01</td></tr></table>',
    );
    await sayHtml(space, `<table><tr>${'<td>cell_with_long_content</td>'.repeat(12)}</tr></table>`);
    await sayHtml(
      space,
      `<pre>${'const x = someFunctionCall(argumentOne, argumentTwo, argumentThree, argumentFour);\n'.repeat(3)}</pre>`,
    );
    const page = await ownerPage(space);
    for (const size of [PHONE, { width: 1280, height: 800 }]) {
      await page.setViewportSize(size);
      const at = `${size.width}×${size.height}`;
      await expect.poll(() => page.locator('#messages .message').count()).toBe(3);
      const seen = await page.locator('#message-log').evaluate((log: any) => {
        const bodies = [...log.querySelectorAll('.message-body.html')] as any[];
        // Every word of every cell on one line: none broken in two (a line may end at a hyphen).
        const broken: string[] = [];
        for (const cell of log.querySelectorAll('.message-body :is(td, th)')) {
          const text = cell.firstChild;
          for (const match of (text.data ?? '').matchAll(/[^\s-]+-?/g)) {
            const range = log.ownerDocument.createRange();
            range.setStart(text, match.index);
            range.setEnd(text, match.index + match[0].length);
            if (new Set([...range.getClientRects()].map((r: any) => Math.round(r.top))).size > 1)
              broken.push(match[0]);
          }
        }
        return {
          sideways: log.scrollWidth - log.clientWidth,
          outside: bodies.map((body) => {
            const bubble = body.closest('.bubble')?.getBoundingClientRect();
            return Math.max(0, body.getBoundingClientRect().right - (bubble?.right ?? 0));
          }),
          scrolls: bodies.map((body) => body.scrollWidth > body.clientWidth),
          broken,
        };
      });
      expect(seen.sideways, at).toBe(0);
      expect(seen.outside, at).toEqual([0, 0, 0]);
      expect(seen.broken, at).toEqual([]);
      // The long table and the code scroll in their bubbles on any screen; the first on a phone.
      expect(seen.scrolls.slice(1), at).toEqual([true, true]);
      if (size === PHONE) expect(seen.scrolls[0], at).toBe(true);
    }
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('tells the owner at the top of the page, on a phone too, that someone asks to join, and takes them to it', async () => {
    const space = await h.createSpace({ name: 'Door', description: 'by approval', privacy: 'private' });
    const page = await ownerPage(space);
    await page.setViewportSize(PHONE);
    expect(await page.locator('#join-requests').textContent()).toBe('');
    await h.joinPending(space, { name: 'Eve', isHuman: true });
    const told = page.getByRole('button', { name: '1 waiting for approval' });
    await told.waitFor();
    // In sight at the top, where the Approve button is far below the messages; said politely.
    const box = await told.boundingBox();
    expect(box && box.y + box.height).toBeLessThanOrEqual(PHONE.height);
    expect(await page.locator('#join-requests').getAttribute('role')).toBe('status');
    expect(await page.title()).toBe('(1 waiting) Door · Convene');
    const fay = await h.joinPending(space, { name: 'Fay', isHuman: true });
    await page.getByRole('button', { name: '2 waiting for approval' }).click();
    expect(await focused(page)).toBe('Approve Eve');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#join-requests').textContent()).toBe('1 waiting for approval');
    // Still one waiting, but another: the button takes the keyboard to who waits now.
    const refused = await h.post(`/hub/space/${space.spaceId}/participants/${fay.participantId}/kick`, {
      key: space.ownerKey,
    });
    expect(refused.status, refused.text).toBe(200);
    await h.joinPending(space, { name: 'Gus', isHuman: true });
    await page.getByRole('button', { name: 'Approve Gus' }).waitFor();
    await page.getByRole('button', { name: '1 waiting for approval' }).click();
    expect(await focused(page)).toBe('Approve Gus');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#join-requests').textContent()).toBe('');
    expect(await page.title()).toBe('Door · Convene');
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('opens the space with a whole link pasted for its key: the link back, or an invitation’s, which goes to join', async () => {
    const space = await h.createSpace({ name: 'Pasted', description: 'links for keys' });
    const other = await h.createSpace({ name: 'Elsewhere', description: 'another space' });
    const page = await newPage();
    // The link back of another space is said to be one, its key not tried here.
    const tried: string[] = [];
    page.on('request', (request) => {
      if (request.headers()['x-private-key'] === other.ownerKey) tried.push(request.url());
    });
    await pasteKey(page, srv.url, space.spaceId, `${srv.url}/space/${other.spaceId}#key=${other.ownerKey}`);
    await expect
      .poll(() => page.locator('#space-notice').textContent())
      .toBe('This link is to another space: open it in the address bar instead.');
    expect(tried).toEqual([]);
    // This space's link back, as the page gives it, opens it.
    await page.getByLabel('Space key').fill(`  ${srv.url}/space/${space.spaceId}#key=${space.ownerKey}  `);
    await page.getByRole('button', { name: 'Open' }).click();
    await expect.poll(() => page.locator('#live').textContent()).toBe('live');
    expect(await storedCredentials(page, space.spaceId)).toMatchObject({
      key: space.ownerKey,
      role: 'owner',
    });
    await page.close();

    // An invitation's link for a human goes to its join page, as its bare key does.
    const invite = await h.post(`/hub/space/${space.spaceId}/invite`, { key: space.ownerKey });
    expect(invite.status, invite.text).toBe(200);
    for (const link of [invite.body.humanLink, invite.body.agentLink]) {
      const joining = await newPage();
      await pasteKey(joining, srv.url, space.spaceId, link);
      await joining.waitForURL(`${srv.url}/join/${space.spaceId}`);
      await joining.locator('#join-section').waitFor();
      await joining.close();
    }
    expect(problems).toEqual([]);
  }, 60_000);

  it('offers a tab without a key to log in and come back to the space, whose key the dashboard then gives', async () => {
    const human = await signup(h, { name: 'Lena' });
    const { token } = await mintToken(h, human);
    const space = await h.createSpace(
      { name: 'Mine', description: 'on my dashboard' },
      { 'X-User-Token': token },
    );
    const page = await newPage();
    await page.goto(`${srv.url}/space/${space.spaceId}`);
    const back = `/login?next=${encodeURIComponent(`/space/${space.spaceId}`)}`;
    expect(await page.locator('#session-nav a').getAttribute('href')).toBe(back);
    const login = page.getByRole('link', { name: 'Log in to use your key from the dashboard' });
    expect(await login.getAttribute('href')).toBe(back);
    await login.click();
    await page.locator('#login-email').fill(human.email);
    await page.locator('#login-password').fill(human.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${srv.url}/space/${space.spaceId}`);
    expect(await login.isHidden()).toBe(true);
    await page.getByRole('button', { name: 'Use my key from the dashboard' }).click();
    await expect.poll(() => page.locator('#live').textContent()).toBe('live');
    expect(await storedCredentials(page, space.spaceId)).toMatchObject({
      key: space.ownerKey,
      role: 'owner',
    });
    // The login page still takes no other site for where to go next.
    await page.goto(`${srv.url}/login?next=${encodeURIComponent('//evil.example/')}`);
    expect(page.url()).toBe(`${srv.url}/login`);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('gives the keyboard back to the document in the list when the document is closed', async () => {
    const space = await h.createSpace({ name: 'Keys', description: 'by keyboard' });
    const artifactId = await h.createArtifact(space, 'plan', 'first\n');
    const page = await ownerPage(space);
    await page.locator(`#artifacts button[data-artifact-id="${artifactId}"]`).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe('artifact-title');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('artifact-close');
    await page.keyboard.press('Enter');
    await page.locator('#artifact-view').waitFor({ state: 'hidden' });
    expect(await page.evaluate(`document.activeElement?.dataset.artifactId`)).toBe(artifactId);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('says so where the sanitiser left nothing of an html message, instead of a blank bubble', async () => {
    const space = await h.createSpace({ name: 'Emptied', description: 'nothing safe' });
    for (const content of [
      '<img src=x onerror=alert(1)>',
      '<svg onload=alert(1)></svg>',
      '<iframe src=/></iframe>',
    ])
      await sayHtml(space, content);
    await sayHtml(space, '<p>kept</p><script>alert(1)</script>');
    const page = await ownerPage(space);
    const bodies = page.locator('#messages .message-body.html');
    await expect.poll(() => bodies.count()).toBe(4);
    expect(await bodies.allTextContents()).toEqual([
      // An image refused says so in its place (trial s71): the message is not empty.
      '(image not shown)',
      ...Array(2).fill('(content removed: nothing in this message could be shown safely)'),
      'kept',
    ]);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('says the same of the lock in the document and in the list once the space expires mid-edit', async () => {
    const space = await h.createSpace({ name: 'Brief', description: 'ends mid-edit', ttl: 12 });
    const { page, artifactId } = await editingParticipant(space, 'Edda');
    const entry = page.locator(`#artifacts button[data-artifact-id="${artifactId}"]`);
    expect(await entry.locator('.badge.locked').textContent()).toBe('editing');
    await page.locator('#artifact-editor').fill('a draft\n');
    await expect
      .poll(() => page.locator('#space-notice').textContent(), { timeout: 20_000 })
      .toBe('This space has expired.');
    expect(await page.locator('#artifact-meta').textContent()).toMatch(/ · unlocked$/);
    expect(await entry.locator('.badge.locked').count()).toBe(0);
    // The draft stays, read-only, as before.
    expect(await page.locator('#artifact-editor').inputValue()).toBe('a draft\n');
    expect(await page.locator('#artifact-editor').getAttribute('readonly')).not.toBeNull();
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('puts away the secret of a new token shown once when that token is revoked', async () => {
    const human = await signup(h, { name: 'Tom' });
    await mintToken(h, human, 'older');
    const page = await newPage();
    await logInToDashboard(page, srv.url, human);
    await page.getByLabel('Name', { exact: true }).fill('laptop');
    await page.getByRole('button', { name: 'Create a token' }).click();
    const secret = page.locator('#token-secret');
    await expect.poll(() => secret.textContent()).toMatch(/^usr_/);
    // Another token revoked: the new one's secret stays to be copied.
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Revoke older' }).click();
    await expect.poll(() => page.locator('#tokens tr.revoked').count()).toBe(1);
    expect(await secret.isVisible()).toBe(true);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Revoke laptop' }).click();
    await expect.poll(() => page.locator('#tokens tr.revoked').count()).toBe(2);
    expect(await page.locator('#token-created').isHidden()).toBe(true);
    expect(await secret.textContent()).toBe('');
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('names the version each button of History acts on', async () => {
    const space = await h.createSpace({ name: 'Named', description: 'versions' });
    const { page, artifactId } = await editingParticipant(space, 'Vera');
    const path = `/hub/space/${space.spaceId}/artifact/${artifactId}`;
    await page.locator('#artifact-editor').fill('second\n');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => h.get(path, { key: space.ownerKey }).then((r) => r.body.version)).toBe(2);
    await page.locator('#artifact-history-button').click();
    const names = () =>
      page
        .locator('#artifact-versions button:visible')
        .evaluateAll((buttons) => buttons.map((b) => b.getAttribute('aria-label')));
    await expect
      .poll(names)
      .toEqual(['View version 2', 'Changes in version 2', 'View version 1', 'Restore version 1']);
    await page.getByRole('button', { name: 'Changes in version 2' }).click();
    await expect
      .poll(() => page.locator('#artifact-version-title').textContent())
      .toBe('Changes from version 1 to version 2');
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('shows the name of a document in the header of its changes as it reads, not as the diff quotes it', async () => {
    const space = await h.createSpace({ name: 'Quoted', description: 'names in diffs' });
    const name = 'Plan / Q3 "draft" ü.md';
    const artifactId = await h.createArtifact(space, name, 'one\n');
    const path = `/hub/space/${space.spaceId}/artifact/${artifactId}`;
    expectOk(await h.post(`${path}/lock`, { key: space.ownerKey }));
    expectOk(await h.patch(path, { key: space.ownerKey, body: { content: 'two\n' } }));
    // The API's diff quotes it, git's way, and stays so.
    const diff = await h.get(`${path}/diff?from=1&to=2`, { key: space.ownerKey });
    expect(diff.text.split('\n')[0]).toBe('--- "Plan / Q3 \\"draft\\" \\303\\274.md"\tversion 1');
    const page = await ownerPage(space);
    await page.locator(`#artifacts button[data-artifact-id="${artifactId}"]`).click();
    await page.locator('#artifact-history-button').click();
    await page.getByRole('button', { name: 'Changes in version 2' }).click();
    await expect
      .poll(() => page.locator('#artifact-version-view .diff-line').allTextContents())
      .toEqual([`--- ${name}\tversion 1`, `+++ ${name}\tversion 2`, '@@ -1,1 +1,1 @@', '-one', '+two']);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);
});
