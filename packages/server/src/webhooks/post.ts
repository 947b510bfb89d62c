import { type Agent as HttpAgent, request as httpRequest } from 'node:http';
import { type Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { WebhookUrlPolicy } from '@convene/core';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { Webhook } from 'standardwebhooks';

export interface WebhookPostResult {
  /** The receiver took it (2xx). */
  ok: boolean;
  /** The receiver answered 410: it is gone for good. */
  gone: boolean;
  /** What went wrong, for its owner to read: `HTTP 500`, `timeout`, or the network error. */
  error: string | undefined;
  /**
   * This node's network policy (WEBHOOK_ALLOW_PRIVATE, WEBHOOK_ALLOW_NETWORKS) refused the
   * address the host resolved to: nothing was sent. Another node, or the one that registered the
   * webhook, may have allowed it.
   */
  refused?: boolean;
}

export interface WebhookPoster {
  post(delivery: { id: string; url: string; secret: string; payload: string }): Promise<WebhookPostResult>;
  close(): void;
}

/** A receiver's answer is never read further than this (its status is what counts). */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * Sends signed deliveries (Standard Webhooks: `webhook-id`, `webhook-timestamp` in seconds,
 * `webhook-signature` `v1,<base64 HMAC-SHA256 of id.timestamp.body>`). The connection is made by
 * request-filtering-agent, which checks every address a host resolves to as it connects, so a
 * host that resolved to a public address at registration and now resolves to a private one
 * (DNS rebinding) is still refused. Redirects are not followed: a 3xx is a failure.
 */
export function webhookPoster({
  policy,
  timeoutMs,
}: {
  policy: WebhookUrlPolicy;
  timeoutMs: number;
}): WebhookPoster {
  const filter = {
    allowPrivateIPAddress: policy.allowPrivate,
    allowIPAddressList: [...policy.allowNetworks],
    keepAlive: true,
  };
  const agents: { http: HttpAgent; https: HttpsAgent } = {
    http: new RequestFilteringHttpAgent(filter),
    https: new RequestFilteringHttpsAgent(filter),
  };
  return {
    post({ id, url, secret, payload }) {
      const msgId = `msg_${id}`;
      // Real time, not the service clock: receivers check the timestamp against their own.
      const now = new Date();
      const signature = new Webhook(secret).sign(msgId, now, payload);
      const target = new URL(url);
      const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
      return new Promise<WebhookPostResult>((resolve) => {
        let settled = false;
        const done = (result: WebhookPostResult) => {
          if (settled) return;
          settled = true;
          resolve(result);
        };
        const req = send(
          target,
          {
            method: 'POST',
            agent: target.protocol === 'https:' ? agents.https : agents.http,
            headers: {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(payload),
              'user-agent': 'Convene-Webhooks/1',
              'webhook-id': msgId,
              'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
              'webhook-signature': signature,
            },
            timeout: timeoutMs,
          },
          (res) => {
            const status = res.statusCode ?? 0;
            let read = 0;
            res.on('data', (chunk: Buffer) => {
              read += chunk.length;
              if (read > MAX_RESPONSE_BYTES) res.destroy();
            });
            const finish = () =>
              done(
                status >= 200 && status < 300
                  ? { ok: true, gone: false, error: undefined }
                  : { ok: false, gone: status === 410, error: `HTTP ${status}` },
              );
            res.on('end', finish);
            res.on('close', finish);
            res.on('error', finish);
          },
        );
        req.on('timeout', () => {
          req.destroy(new Error('timeout'));
        });
        req.on('error', (error) =>
          done({ ok: false, gone: false, error: describe(error), refused: isRefusal(error) }),
        );
        req.end(payload);
      });
    },
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

/** request-filtering-agent's refusal of an address the policy does not allow. */
const isRefusal = (error: Error): boolean => /is not allowed/.test(error.message);

/** A network error as its owner may read it: never a stack, never more than a line. */
function describe(error: Error & { code?: string }): string {
  if (error.message === 'timeout') return 'timeout';
  if (isRefusal(error)) return 'refused: the host resolves to a private address';
  return (error.code ?? error.message).slice(0, 200);
}
