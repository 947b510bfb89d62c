import { describe, expect, it } from 'vitest';
import { useServer } from './helpers';
import { hasChromium, useBrowser } from './helpers/browser';
import { signUpInPage } from './helpers/pages';

/**
 * The whole login in a real browser, from links whose `next` names another site in the spellings
 * the outside review used: the human lands on this server's dashboard, never on evil.example.
 */
describe.skipIf(!hasChromium)('logging in from /login?next=/%09/evil.example', () => {
  const { srv } = useServer();
  const browser = useBrowser();

  it('stays on this server', async () => {
    const page = await browser.newPage();
    const visited: string[] = [];
    page.on('request', (request) => visited.push(request.url()));
    for (const next of ['/%09/evil.example', '/%5Cevil.example', '%2F%2Fevil.example']) {
      await page.goto(`${srv.url}/login?next=${next}`);
      expect(page.url()).toBe(`${srv.url}/login`);
    }
    await signUpInPage(page);
    await page.waitForURL(`${srv.url}/dashboard`);
    expect(visited.filter((url) => !url.startsWith(`${srv.url}/`))).toEqual([]);
    await page.close();
    expect(browser.problems).toEqual([]);
  }, 60_000);
});
