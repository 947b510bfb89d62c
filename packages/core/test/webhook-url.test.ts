import { describe, expect, it } from 'vitest';
import { RateLimitedError, ValidationError } from '../src/errors';
import { WorkGate } from '../src/infra/work-gate';
import { checkWebhookUrl, defaultWebhookUrlPolicy } from '../src/webhooks/url-policy';

const policy = defaultWebhookUrlPolicy;
/** A lookup a test ends by hand (a name whose servers answer when told to). */
function pending() {
  let answer: (addresses: string[]) => void = () => {};
  const resolve = () => new Promise<string[]>((done) => (answer = done));
  return { resolve, answer: (addresses: string[]) => answer(addresses) };
}
const gate = () => new WorkGate(2, 2, 'later', 5);

describe('checkWebhookUrl, looking a host up', () => {
  it('answers at its timeout, but the lookup keeps its place in the gate until it ends', async () => {
    const lookups = gate();
    const slow = pending();
    const check = checkWebhookUrl('https://slow.example/hook', policy, {
      resolve: slow.resolve,
      timeoutMs: 50,
      gate: lookups,
      client: 'mallory',
    });
    await expect(check).rejects.toBeInstanceOf(ValidationError);
    await expect(check).rejects.toThrow("url's host slow.example did not resolve within 0.05 s");
    // Its thread is still held: the gate's other slot serves another client meanwhile...
    const other = pending();
    const second = checkWebhookUrl('https://b.example/hook', policy, {
      resolve: other.resolve,
      gate: lookups,
      client: 'alice',
    });
    // ...and a third lookup waits for one of the two to end, even past its own timeout.
    const third = checkWebhookUrl('https://c.example/hook', policy, {
      resolve: async () => ['93.184.216.34'],
      timeoutMs: 50,
      gate: lookups,
      client: 'bob',
    });
    await expect(third).rejects.toThrow('did not resolve within 0.05 s');
    other.answer(['93.184.216.34']);
    expect((await second).href).toBe('https://b.example/hook');
    slow.answer(['93.184.216.34']);
  });

  it('lets a client have two lookups at a time: a third meanwhile is 429, retry when a lookup would time out', async () => {
    const lookups = gate();
    const [a, b] = [pending(), pending()];
    const first = checkWebhookUrl('https://a.example/hook', policy, {
      resolve: a.resolve,
      client: 'mallory',
      gate: lookups,
    });
    const second = checkWebhookUrl('https://b.example/hook', policy, {
      resolve: b.resolve,
      client: 'mallory',
      gate: lookups,
    });
    const third = checkWebhookUrl('https://c.example/hook', policy, {
      resolve: async () => ['93.184.216.34'],
      client: 'mallory',
      gate: lookups,
    });
    await expect(third).rejects.toBeInstanceOf(RateLimitedError);
    await expect(third).rejects.toMatchObject({ retryAfterSeconds: 5 });
    a.answer(['93.184.216.34']);
    b.answer(['10.0.0.1']);
    expect((await first).href).toBe('https://a.example/hook');
    await expect(second).rejects.toMatchObject({ code: 'webhook_address_private' });
  });

  it('says a host that does not resolve', async () => {
    await expect(
      checkWebhookUrl('https://nowhere.example/hook', policy, {
        resolve: () =>
          Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' })),
        gate: gate(),
      }),
    ).rejects.toThrow("url's host nowhere.example does not resolve");
  });
});
