import { describe, expect, it } from 'vitest';
import { useServer } from './helpers';
import { hasChromium, useBrowser } from './helpers/browser';

// What an outside human's trial of the pages found (session 24), each checked in a real browser.
describe.skipIf(!hasChromium)('the pages as a human found them', () => {
  const { srv } = useServer();
  const { problems, newPage } = useBrowser();

  it('says that a join link whose id is no UUID names no space, without asking the API', async () => {
    const page = await newPage();
    const api: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/hub/')) api.push(request.url());
    });
    const response = await page.goto(`${srv.url}/join/not-a-uuid#key=inv_whatever`);
    expect(response?.status()).toBe(404);
    await expect
      .poll(() => page.locator('#join-notice').textContent())
      .toBe('No space has this address. Check the link you were given: a space’s address ends with its id.');
    expect(api).toEqual([]);
    await page.close();
    expect(problems).toEqual([]);
  }, 60_000);
});
