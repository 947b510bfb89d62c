// verifyWebhook where Web Crypto is missing: a browser page outside a secure context has `crypto`
// (getRandomValues) but no `crypto.subtle`.
import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConveneError, verifyWebhook, WebhookVerificationError } from '../../src';

const key = Buffer.alloc(24, 7);
const secret = `whsec_${key.toString('base64')}`;

/** A delivery signed as the service signs it. */
function delivery(body: string) {
  const id = 'msg_1';
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return {
    body,
    headers: { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` },
    secret,
  };
}

describe('verifyWebhook without Web Crypto', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('verifies a delivery where crypto.subtle exists', async () => {
    await expect(verifyWebhook(delivery('{"type":"message"}'))).resolves.toEqual({ type: 'message' });
  });

  it('says that it needs crypto.subtle, a secure context, instead of a TypeError of importKey', async () => {
    const { getRandomValues } = globalThis.crypto;
    for (const insecure of [{ getRandomValues }, undefined]) {
      vi.stubGlobal('crypto', insecure);
      const error = await verifyWebhook(delivery('{"type":"message"}')).catch((e: unknown) => e);
      // The receiver's environment, not the delivery: no WebhookVerificationError (a 400 to answer).
      expect(error).toBeInstanceOf(ConveneError);
      expect(error).not.toBeInstanceOf(WebhookVerificationError);
      expect((error as Error).message).toMatch(
        /needs Web Crypto \(crypto\.subtle\).*secure context \(https or localhost\)/,
      );
      // Before the delivery is looked at: a request without the headers does not hide it.
      await expect(verifyWebhook({ body: '{}', headers: {}, secret })).rejects.toThrow(/crypto\.subtle/);
      vi.unstubAllGlobals();
    }
  });
});
