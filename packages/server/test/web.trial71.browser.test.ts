import { describe, expect, it } from 'vitest';
import { onPostgres, useServer } from './helpers';
import { hasChromium, useBrowser } from './helpers/browser';
import { pageSteps } from './helpers/pages';

// What a human's trial of the pages in Chromium found in session 71 (the refused join request and
// the focus after Done editing and Force unlock are checked beside the tests they extend).
// What the page makes of markup does not depend on the database: once, on PGlite.
describe.skipIf(!hasChromium || onPostgres())('the pages as a human found them (session 71)', () => {
  const { srv, h } = useServer();
  const { problems, newPage } = useBrowser();
  const { ownerPage } = pageSteps({ srv, h }, newPage);

  it('says in words, inline, that an image of an html message was not shown, where a broken icon broke the line', async () => {
    const space = await h.createSpace({ name: 'Pictures', description: 'images from elsewhere' });
    const page = await ownerPage(space);
    const bodies = page.locator('#messages .message-body.html');
    for (const content of [
      'before <img src="http://tracker.example/x.png" alt="tracker"> after',
      '<b>bold</b> <img src=x> end',
      '<img src="javascript:alert(1)">',
      'kept <img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==" alt="dot">',
    ]) {
      const sent = await h.post(`/hub/space/${space.spaceId}/messages`, {
        key: space.ownerKey,
        body: { content, type: 'html' },
      });
      expect(sent.status, sent.text).toBe(200);
    }
    await expect.poll(() => bodies.count()).toBe(4);
    expect(await bodies.allTextContents()).toEqual([
      'before (image not shown: tracker) after',
      'bold (image not shown) end',
      '(image not shown)',
      'kept ',
    ]);
    // No image is left without its source (a broken icon); the safe one stays an image.
    expect(await page.locator('#messages img:not([src])').count()).toBe(0);
    expect(await bodies.nth(3).locator('img[alt="dot"]').count()).toBe(1);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('says a frameset message had nothing to show, where it wrote "null"', async () => {
    const space = await h.createSpace({ name: 'Frames', description: 'markup with no body' });
    const page = await ownerPage(space);
    for (const content of [
      '<frameset onload=alert(1)>',
      '<frameset><frame src="https://x.example/"></frameset>',
    ]) {
      const sent = await h.post(`/hub/space/${space.spaceId}/messages`, {
        key: space.ownerKey,
        body: { content, type: 'html' },
      });
      expect(sent.status, sent.text).toBe(200);
    }
    const bodies = page.locator('#messages .message-body.html');
    await expect.poll(() => bodies.count()).toBe(2);
    expect(await bodies.allTextContents()).toEqual(
      Array(2).fill('(content removed: nothing in this message could be shown safely)'),
    );
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);
});
