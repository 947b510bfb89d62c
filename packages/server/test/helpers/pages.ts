import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import type { SpaceFixture } from './factories';
import type { ServerFixture } from './fixture';

/** Opens the page of a space at `base` and pastes `key` into "Open this space". */
export async function pasteKey(page: Page, base: string, spaceId: string, key: string): Promise<void> {
  await page.goto(`${base}/space/${spaceId}`);
  await page.getByLabel('Space key').fill(key);
  await page.getByRole('button', { name: 'Open' }).click();
}

/**
 * Creates an account with the sign-up form of the login page `page` is on (a fresh email; `name`
 * when given); the caller waits for where it leads.
 */
export async function signUpInPage(page: Page, name?: string): Promise<void> {
  if (name !== undefined) await page.locator('#signup-name').fill(name);
  await page.locator('#signup-email').fill(`web-${randomUUID()}@example.com`);
  await page.locator('#signup-password').fill('a long password');
  await page.getByRole('button', { name: 'Create the account' }).click();
}

/** Logs `human` in with the form of the login page, which leads to the dashboard. */
export async function logInToDashboard(
  page: Page,
  base: string,
  human: { email: string; password: string },
): Promise<void> {
  await page.goto(`${base}/login?next=/dashboard`);
  await page.locator('#login-email').fill(human.email);
  await page.locator('#login-password').fill(human.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(`${base}/dashboard`);
}

/** The id, else the accessible name, of what has the keyboard focus. */
/** How far the message list is from its end, in pixels (0: at the end). */
export const fromEnd = (page: Page): Promise<number> =>
  page.locator('#message-log').evaluate((log) => log.scrollHeight - log.scrollTop - log.clientHeight);

export const focused = (page: Page): Promise<string> =>
  page.evaluate(
    `(({ activeElement: a }) => a?.id || a?.getAttribute('aria-label') || a?.tagName || '')(document)`,
  );

/** What the tab keeps for a space in sessionStorage. */
export const storedCredentials = (page: Page, spaceId: string): Promise<any> =>
  page.evaluate(`JSON.parse(sessionStorage.getItem(${JSON.stringify(`convene:space:${spaceId}`)}))`);

/**
 * The steps the browser tests take through the pages, bound to one server (`useServer`) and one
 * browser (`useBrowser().newPage`).
 */
export function pageSteps({ srv, h }: Pick<ServerFixture, 'srv' | 'h'>, newPage: () => Promise<Page>) {
  /** Polls listMessages over REST until a message matching `match` arrives. */
  async function waitForRestMessage(space: SpaceFixture, match: (m: any) => boolean) {
    let found: any;
    await expect
      .poll(async () => {
        const res = await h.get(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey });
        expect(res.status, res.text).toBe(200);
        found = res.body.messages.find(match);
        return found !== undefined;
      })
      .toBe(true);
    return found;
  }

  async function joinThroughTheLink(page: Page, space: SpaceFixture, name: string) {
    const invite = await h.post(`/hub/space/${space.spaceId}/invite`, { key: space.ownerKey });
    expect(invite.status).toBe(200);
    await page.goto(invite.body.humanLink);
    await page.getByLabel('Your name').fill(name);
    await page.getByLabel('Your role').fill('reviewer');
    await page.getByRole('button', { name: 'Join the space' }).click();
    return invite.body as { humanLink: string; publicInvitationKey: string };
  }

  /** A human named `name` joins `space` in a new page, which is live once this resolves. */
  async function joinedPage(space: SpaceFixture, name: string): Promise<Page> {
    const page = await newPage();
    await joinThroughTheLink(page, space, name);
    await page.waitForURL(`${srv.url}/space/${space.spaceId}`);
    await expect.poll(() => page.locator('#live').textContent()).toBe('live');
    return page;
  }

  /** The owner's page of `space` in a new page (the owner key pasted), once it is live. */
  async function ownerPage(space: SpaceFixture): Promise<Page> {
    const page = await newPage();
    await pasteKey(page, srv.url, space.spaceId, space.ownerKey);
    await expect.poll(() => page.locator('#live').textContent()).toBe('live');
    return page;
  }

  /** A participant named `name` joins in a new page, opens a new document `plan` and locks it. */
  async function editingParticipant(space: SpaceFixture, name: string) {
    const artifactId = await h.createArtifact(space, 'plan', 'first\n');
    const lockPath = `/hub/space/${space.spaceId}/artifact/${artifactId}/lock`;
    const page = await joinedPage(space, name);
    await page.locator(`#artifacts button[data-artifact-id="${artifactId}"]`).click();
    await page.getByRole('button', { name: 'Lock and edit' }).click();
    await page.locator('#artifact-editor').waitFor({ state: 'visible' });
    return { page, lockPath, artifactId };
  }

  return { waitForRestMessage, joinThroughTheLink, joinedPage, ownerPage, editingParticipant };
}
