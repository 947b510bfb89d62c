import { describe, expect, it } from 'vitest';
import { RateLimitedError, ValidationError } from '../src/errors';
import { checkWebhookUrl, defaultWebhookUrlPolicy } from '../src/webhooks/url-policy';

const policy = defaultWebhookUrlPolicy;
/** A name whose servers never answer. */
const never = () => new Promise<string[]>(() => {});

describe('checkWebhookUrl, looking a host up', () => {
  it('waits no longer than its timeout for a lookup that never ends', async () => {
    const started = Date.now();
    const check = checkWebhookUrl('https://slow.example/hook', policy, { resolve: never, timeoutMs: 50 });
    await expect(check).rejects.toBeInstanceOf(ValidationError);
    await expect(check).rejects.toThrow("url's host slow.example did not resolve within 0.05 s");
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('looks up one URL of a client at a time: a second meanwhile is 429, retry in a second', async () => {
    let answer: (addresses: string[]) => void = () => {};
    const first = checkWebhookUrl('https://a.example/hook', policy, {
      resolve: () => new Promise((resolve) => (answer = resolve)),
      client: 'mallory',
    });
    const second = checkWebhookUrl('https://b.example/hook', policy, { resolve: never, client: 'mallory' });
    await expect(second).rejects.toBeInstanceOf(RateLimitedError);
    await expect(second).rejects.toMatchObject({ retryAfterSeconds: 1 });
    // Another client is not refused for it.
    const other = checkWebhookUrl('https://c.example/hook', policy, {
      resolve: async () => ['93.184.216.34'],
      client: 'alice',
    });
    expect((await other).href).toBe('https://c.example/hook');
    answer(['93.184.216.34']);
    expect((await first).href).toBe('https://a.example/hook');
    // Done, the client may check another.
    const again = checkWebhookUrl('https://d.example/hook', policy, {
      resolve: async () => ['10.0.0.1'],
      client: 'mallory',
    });
    await expect(again).rejects.toMatchObject({ code: 'webhook_address_private' });
  });

  it('says a host that does not resolve', async () => {
    await expect(
      checkWebhookUrl('https://nowhere.example/hook', policy, {
        resolve: () =>
          Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' })),
      }),
    ).rejects.toThrow("url's host nowhere.example does not resolve");
  });
});
