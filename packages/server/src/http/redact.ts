import type { FastifyRequest } from 'fastify';

const SECRET_HEADERS = ['x-private-key', 'x-user-token', 'x-poll-token', 'authorization', 'cookie'];

/** Query parameters that may carry a secret, by their decoded, lower-cased name. */
const SECRET_PARAMS = new Set(['key', 'token', 'code', 'devicecode', 'ticket', 'polltoken']);

/** A query parameter's name as the query parser reads it (`%6Bey` and `k%65y` are `key`). */
function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll('+', ' ')).trim().toLowerCase();
  } catch {
    // Undecodable: compare what can be read of it.
    return name.toLowerCase();
  }
}

/**
 * Request log lines never carry a key: every query parameter whose decoded name may hold a secret
 * has its value replaced, however the name was encoded.
 */
export function redactUrl(url: string): string {
  const at = url.indexOf('?');
  if (at === -1) return url;
  const hash = url.indexOf('#', at);
  const query = url.slice(at + 1, hash === -1 ? undefined : hash);
  const redacted = query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq === -1 ? pair : pair.slice(0, eq);
      return SECRET_PARAMS.has(decodedName(name)) ? `${name}=[redacted]` : pair;
    })
    .join('&');
  return `${url.slice(0, at + 1)}${redacted}`;
}

export function redactedRequestSerializer(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactUrl(request.url),
    remoteAddress: request.ip,
    ...(SECRET_HEADERS.some((h) => request.headers[h] !== undefined) ? { credentials: '[redacted]' } : {}),
  };
}
