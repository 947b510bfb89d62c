import type { FastifyRequest } from 'fastify';

/**
 * An onRequest step that warns once per process when a request carries X-Forwarded-For while
 * TRUST_PROXY is off: the node then sits behind a proxy it does not trust, and every client behind
 * it is the proxy's one address to the rate limits and the stream caps. Nothing when TRUST_PROXY
 * is set.
 */
export function forwardedWithoutTrust(trustProxy: number): (request: FastifyRequest) => void {
  let warned = trustProxy > 0;
  return (request) => {
    if (warned || request.headers['x-forwarded-for'] === undefined) return;
    warned = true;
    request.log.warn(
      `a request came through a proxy (X-Forwarded-For) while TRUST_PROXY is off: every client behind ` +
        `it counts as the proxy's address (${request.ip}) for the rate limits and the stream caps. ` +
        'If proxies of yours stand before this node, set TRUST_PROXY to how many (said once per process)',
    );
  };
}
