import { createCipheriv, createDecipheriv, createHash, hash, randomBytes, randomInt } from 'node:crypto';

/**
 * Every secret the service hands out is minted here: random bytes from the CSPRNG, stored as a
 * SHA-256 lookup hash, the plaintext returned to the caller exactly once.
 */

/** 64-character hex owner and participant keys. */
export const mintSpaceKey = (): string => randomBytes(32).toString('hex');

/** publicInvitationKey: opaque, distinguishable from space keys at a glance. */
export const mintInvitationKey = (): string => `inv_${randomBytes(24).toString('base64url')}`;

/** The pollToken of a private-space join: what only that joiner holds (X-Poll-Token). */
export const mintPollToken = (): string => `poll_${randomBytes(32).toString('base64url')}`;

/** User API tokens carry the `usr_` prefix. */
export const mintUserToken = (): string => `usr_${randomBytes(32).toString('base64url')}`;

/** Device codes of the link flow: long, random, never in a URL. */
export const mintDeviceCode = (): string => randomBytes(32).toString('base64url');

/**
 * Webhook signing secrets, in the Standard Webhooks form: `whsec_` and the base64 of 24 random
 * bytes (the HMAC key is those bytes).
 */
export const mintWebhookSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

/** MCP session ids: a client's connection secret (visible ASCII, as the transport requires). */
export const mintMcpSessionId = (): string => randomBytes(24).toString('base64url');

const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
/** 8 characters from a vowel-free alphabet (no words, no 0/O or 1/I confusion). */
export const mintUserCode = (): string =>
  Array.from({ length: 8 }, () => USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)]).join('');

export const hashSecret = (secret: string): string => hash('sha256', secret, 'hex');

/** The short display prefix stored beside a hash so lists can tell tokens apart. */
export const displayPrefix = (secret: string): string => secret.slice(0, 8);

/**
 * AES-256-GCM under a key derived from the server SECRET, for the few secrets that must be
 * handed out again (getMySpaceKey, getJoinStatus, the link flow's token).
 */
export class SecretBox {
  private readonly key: Buffer;
  /**
   * Names the key without giving it away (a hash of it under a label of its own): nodes compare it
   * with the deployment's (Sealer) to tell that they seal under the same SECRET. It tells no more
   * about SECRET than any value sealed under it does.
   */
  readonly fingerprint: string;
  constructor(secret: string) {
    this.key = createHash('sha256').update(`convene:secret-box:${secret}`).digest();
    this.fingerprint = createHash('sha256')
      .update('convene:secret-fingerprint:')
      .update(this.key)
      .digest('hex')
      .slice(0, 32);
  }
  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [
      'v1',
      iv.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
      body.toString('base64url'),
    ].join('.');
  }
  decrypt(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('unreadable sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString(
      'utf8',
    );
  }
}
