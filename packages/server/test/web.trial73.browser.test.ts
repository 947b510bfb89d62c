import { describe, expect, it } from 'vitest';
import { onPostgres, useServer } from './helpers';
import { hasChromium, useBrowser } from './helpers/browser';
import { focused, pageSteps, signUpInPage } from './helpers/pages';

// What a keyboard and screen-reader user's trial of the pages found in session 73: where the focus
// went once the control pressed was gone, and what was said. Once, on PGlite.
describe.skipIf(!hasChromium || onPostgres())(
  'the pages by keyboard, as a trial found them (session 73)',
  () => {
    const { srv, h } = useServer();
    const { problems, newPage } = useBrowser();
    const { ownerPage, joinThroughTheLink } = pageSteps({ srv, h }, newPage);

    it('takes the keyboard to "Waiting for approval" once a private join is asked (it fell to the page)', async () => {
      const space = await h.createSpace({ name: 'By approval', description: 'd', privacy: 'private' });
      const page = await newPage();
      await joinThroughTheLink(page, space, 'Keyboard');
      await page.getByRole('heading', { name: 'Waiting for approval' }).waitFor();
      await expect.poll(() => focused(page)).toBe('waiting-title');
      await page.close();
      expect(problems).toEqual([]);
    }, 60_000);

    it("keeps the keyboard in the participants' list when a row loses its buttons or goes (Remove, Refuse), and on the notice once the space is closed", async () => {
      const space = await h.createSpace({ name: 'Moderated', description: 'd', privacy: 'private' });
      await h.joinActive(space, { name: 'Fay' });
      // A request still waiting, which Refuse takes off the list.
      const invitationKey = await h.invite(space);
      const waiting = await h.post(`/hub/space/${space.spaceId}/join`, {
        key: invitationKey,
        body: { name: 'Eve' },
      });
      expect(waiting.status, waiting.text).toBe(202);
      const page = await ownerPage(space);
      page.on('dialog', (dialog) => void dialog.accept());
      for (const button of ['Remove Fay', 'Refuse Eve']) {
        await page.getByRole('button', { name: button }).focus();
        await page.keyboard.press('Enter');
        await expect.poll(() => page.getByRole('button', { name: button }).count()).toBe(0);
        await expect.poll(() => focused(page), { message: button }).toBe('people-title');
      }
      await page.getByRole('button', { name: 'Close the space' }).focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => focused(page)).toBe('space-notice');
      expect(await page.locator('#space-notice').textContent()).toBe('You closed this space.');
      await page.close();
      expect(problems).toEqual([]);
    }, 60_000);

    it('says a new token is shown once and takes the keyboard to its Copy button', async () => {
      const page = await newPage();
      await page.goto(`${srv.url}/login`);
      await signUpInPage(page);
      await page.waitForURL(`${srv.url}/dashboard`);
      await page.getByLabel('Name', { exact: true }).fill('my bot');
      await page.getByLabel('Name', { exact: true }).press('Enter');
      await expect.poll(() => focused(page)).toBe('Copy the new token');
      expect(await page.locator('#dashboard-notice').getAttribute('role')).toBe('status');
      expect(await page.locator('#dashboard-notice').textContent()).toBe(
        'Token “my bot” created. It is shown once, below: copy it now.',
      );
      // Pressed, it says what it copied, not a bare "Copied".
      await page.keyboard.press('Enter');
      await expect.poll(() => focused(page)).toBe('Copied the new token');
      expect(await page.locator('#token-created button').textContent()).toBe('Copied');
      await page.close();
      expect(problems).toEqual([]);
    }, 60_000);

    it('moves the keyboard between Remember and Forget it, and says what this browser keeps', async () => {
      const space = await h.createSpace({ name: 'Kept', description: 'd' });
      const page = await ownerPage(space);
      await page.getByText('Keep access after this tab closes').click();
      await page.getByRole('button', { name: 'Remember on this device' }).focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => focused(page)).toBe('forget');
      expect(await page.locator('#keep-status').textContent()).toBe(
        'This browser remembers your key for this space.',
      );
      await page.keyboard.press('Enter');
      await expect.poll(() => focused(page)).toBe('remember');
      expect(await page.locator('#keep-status').textContent()).toBe(
        'This browser no longer remembers your key.',
      );
      await page.close();
      expect(problems).toEqual([]);
    }, 60_000);

    it('says a document is free once the lock that refused this tab is released, where the refusal stayed', async () => {
      const space = await h.createSpace({ name: 'Contended', description: 'd' });
      const artifactId = await h.createArtifact(space, 'plan', 'first\n');
      const other = await h.joinActive(space, { name: 'Grace' });
      const page = await ownerPage(space);
      await page.locator(`#artifacts button[data-artifact-id="${artifactId}"]`).click();
      // Grace locks it as this page asks, before it hears of it: its Lock and edit is refused.
      const lockPath = `/hub/space/${space.spaceId}/artifact/${artifactId}/lock`;
      await page.route('**/lock', async (route) => {
        if (route.request().method() === 'POST')
          expect((await h.post(lockPath, { key: other.key })).status).toBe(200);
        await route.continue();
      });
      await page.getByRole('button', { name: 'Lock and edit' }).click();
      const notice = page.locator('#artifact-notice');
      await expect
        .poll(() => notice.textContent())
        .toMatch(/^Grace is editing this document until .+\. Try again when they are done\.$/);
      // Shown as Grace's, and Lock disabled, whether or not the stream has said so yet.
      expect(await page.getByRole('button', { name: 'Lock and edit' }).isDisabled()).toBe(true);
      expect(await page.locator('#artifact-meta').textContent()).toContain('locked by Grace');
      // The button pressed is disabled: the keyboard is on what says why, not on the page.
      expect(await focused(page)).toBe('artifact-notice');
      await page.unroute('**/lock');
      expect((await h.request('DELETE', lockPath, { key: other.key })).status).toBe(200);
      await expect
        .poll(() => notice.textContent(), { timeout: 20_000 })
        .toBe('The document is free now: Lock and edit to change it.');
      expect(await notice.getAttribute('role')).toBe('status');
      expect(await page.getByRole('button', { name: 'Lock and edit' }).isDisabled()).toBe(false);
      await page.close();
    }, 60_000);

    it('puts the keyboard in the message box on opening only where the box is in view (at 200 % zoom it typed out of sight)', async () => {
      const space = await h.createSpace({ name: 'Zoomed', description: 'd' });
      const page = await newPage();
      for (const [width, height, inView] of [
        [1280, 800, true],
        [640, 400, false],
      ] as const) {
        await page.setViewportSize({ width, height });
        await page.goto(`${srv.url}/space/${space.spaceId}#key=${space.ownerKey}`);
        await expect.poll(() => page.locator('#live').textContent()).toBe('live');
        expect(await focused(page), `${width}×${height}`).toBe(inView ? 'message-content' : 'BODY');
      }
      await page.close();
      expect(problems).toEqual([]);
    }, 60_000);

    it('draws placeholders in the muted text colour, readable on the dark surface too', async () => {
      const space = await h.createSpace({ name: 'Dark', description: 'd' });
      const page = await ownerPage(space);
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        const [placeholder, muted] = (await page.evaluate(`[
        getComputedStyle(document.getElementById('message-content'), '::placeholder').color,
        getComputedStyle(document.querySelector('.meta')).color,
      ]`)) as [string, string];
        expect(placeholder, scheme).toBe(muted);
      }
      await page.close();
      expect(problems).toEqual([]);
    }, 60_000);
  },
);
