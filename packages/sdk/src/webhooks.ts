import type { APIPromise } from './api-promise';
import { ConveneError, markErrorKinds } from './errors';
import type {
  CreateWebhookParams,
  CreateWebhookResult,
  OkResult,
  WebhookEvent,
  WebhookList,
} from './generated';
import { showAs } from './internal';
import { SpaceResource } from './space-resource';
import type { RequestOptions } from './transport';

/** Your webhooks in one space: the service POSTs the space's events to them, signed. */
export class Webhooks extends SpaceResource {
  /** @internal */
  constructor(...args: ConstructorParameters<typeof SpaceResource>) {
    super(...args);
    showAs(Webhooks, 'Webhooks');
  }

  /**
   * Registers `url` for the space's events (every type, or `events`). The answer carries the
   * signing `secret`, shown this once: keep it to verify deliveries (verifyWebhook).
   */
  create(params: CreateWebhookParams, options?: RequestOptions): APIPromise<CreateWebhookResult> {
    return this.call('createWebhook', {}, params, options);
  }

  /** Your webhooks in the space (the owner's key lists everyone's), without their secrets. */
  list(options?: RequestOptions): APIPromise<WebhookList> {
    return this.call('listWebhooks', {}, undefined, options);
  }

  /** Deletes a webhook: nothing more is delivered to it. */
  delete(webhookId: string, options?: RequestOptions): APIPromise<OkResult> {
    return this.call('deleteWebhook', { webhookId }, undefined, options);
  }
}

/** A delivery that does not verify: wrong or missing signature, or too old. */
export class WebhookVerificationError extends ConveneError {
  override name = 'WebhookVerificationError';
}
markErrorKinds(WebhookVerificationError);

export interface VerifyWebhookOptions {
  /**
   * The request body exactly as received (the signature covers its bytes): the raw text, or its
   * bytes (a Buffer or another Uint8Array, an ArrayBuffer), read as UTF-8.
   */
  body: string | Uint8Array | ArrayBuffer;
  /** The request headers: `webhook-id`, `webhook-timestamp`, `webhook-signature`. */
  headers: Headers | Record<string, string | string[] | undefined>;
  /** The webhook's secret (`whsec_…`) that createWebhook answered. */
  secret: string;
  /** How far `webhook-timestamp` may be from now, in seconds (default 300): replays are refused. */
  toleranceSeconds?: number | undefined;
  /** The current time (tests). */
  now?: Date | undefined;
}

/**
 * Verifies a delivery (Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`
 * under the secret's bytes) and returns its payload; throws WebhookVerificationError otherwise.
 * Deliveries are retried with the same `webhook-id`: use it to drop duplicates. Web Crypto only,
 * so it runs in Node 20+, Deno, Bun, edge functions and browsers (in a secure context: https or
 * localhost, where `crypto.subtle` exists; elsewhere it throws a ConveneError that says so).
 */
export async function verifyWebhook(options: VerifyWebhookOptions): Promise<WebhookEvent> {
  // A receiver's mistake, not a bad delivery: a ConveneError, not a WebhookVerificationError.
  // Bytes are read as UTF-8. A body parsed already (express.json()'s object) can no longer be
  // checked: said so, not as a forged delivery nor as a TypeError of TextDecoder.
  const raw = options?.body;
  const body =
    typeof raw === 'string'
      ? raw
      : (raw as ArrayBuffer)?.byteLength >= 0
        ? new TextDecoder().decode(raw)
        : undefined;
  if (body === undefined || !options.headers || typeof options.secret !== 'string')
    throw new ConveneError('verifyWebhook needs { body, headers, secret }');
  // A page served over plain http (not localhost) has `crypto` without `subtle`: said here rather
  // than as a TypeError of importKey, and before the delivery is looked at, like the secret.
  const subtle = globalThis.crypto?.subtle;
  if (!subtle)
    throw new ConveneError(
      'verifyWebhook needs Web Crypto (crypto.subtle): a secure context (https or localhost)',
    );
  // Before the delivery is looked at: a receiver whose secret is missing would otherwise answer
  // every delivery 400 as a bad one, and look for the fault at the sender.
  const secret = secretBytes(options.secret);
  const header = (name: string): string | undefined => {
    if (options.headers instanceof Headers) return options.headers.get(name) ?? undefined;
    const found = Object.entries(options.headers).find(([key]) => key.toLowerCase() === name)?.[1];
    return Array.isArray(found) ? found[0] : found;
  };
  const id = header('webhook-id');
  const timestamp = header('webhook-timestamp');
  const signatures = header('webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature');
  const seconds = Number(timestamp);
  const now = (options.now ?? new Date()).getTime() / 1000;
  if (!Number.isInteger(seconds) || Math.abs(now - seconds) > (options.toleranceSeconds ?? 300))
    throw new WebhookVerificationError('webhook-timestamp is too far from now');
  const key = await subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${body}`);
  // The header may carry several space-separated signatures (while a secret is rotated).
  for (const candidate of signatures.split(' ')) {
    const [version, value] = candidate.split(',');
    if (version !== 'v1' || !value) continue;
    let signature: Uint8Array<ArrayBuffer>;
    try {
      signature = fromBase64(value);
    } catch {
      continue;
    }
    if (await subtle.verify('HMAC', key, signature, signed)) {
      try {
        return JSON.parse(body) as WebhookEvent;
      } catch (error) {
        throw new WebhookVerificationError('the body is not JSON', { cause: error });
      }
    }
  }
  throw new WebhookVerificationError('no valid signature');
}

/**
 * The key bytes of a `whsec_` secret. A value that is not one (empty: a variable left unset; no
 * `whsec_`; cut short) is the receiver's configuration, not a bad delivery: a ConveneError that
 * says so, where Web Crypto and atob would throw a bare DOMException and a wrong key would make
 * every delivery look forged.
 */
function secretBytes(secret: string): Uint8Array<ArrayBuffer> {
  let bytes: Uint8Array<ArrayBuffer> | undefined;
  try {
    if (secret.startsWith('whsec_')) bytes = fromBase64(secret.slice('whsec_'.length));
  } catch {
    // said below
  }
  // webhooks.create mints secrets of 24 bytes: a shorter one was cut short.
  if (!bytes || bytes.length < 24)
    throw new ConveneError(
      'verifyWebhook: not a webhook secret (whsec_, base64 of 24 bytes or more): is it set, and whole?',
    );
  return bytes;
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
}
