import type { FastifyRequest } from 'fastify';

const SECRET_HEADERS = ['x-private-key', 'x-user-token', 'authorization', 'cookie'];

/** Request log lines never carry a key: the `key` query parameter and secret headers are redacted. */
export function redactUrl(url: string): string {
  return url.replace(/([?&](?:key|token|code|deviceCode)=)[^&#]*/gi, '$1[redacted]');
}

export function redactedRequestSerializer(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactUrl(request.url),
    remoteAddress: request.ip,
    ...(SECRET_HEADERS.some((h) => request.headers[h] !== undefined) ? { credentials: '[redacted]' } : {}),
  };
}
