import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import { REQUEST_ID_HEADER } from './request-id';

/**
 * What a page on another origin may read of an answer besides the always-safe headers: what the
 * SDK reads (request id, rate limit, retry, idempotent replay, version and deprecation) and what
 * an answer points at (Location, the download's file name).
 */
const EXPOSED_HEADERS = [
  REQUEST_ID_HEADER,
  'API-Version',
  'Deprecation',
  'Sunset',
  'Link',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'RateLimit-Policy',
  'Retry-After',
  'Idempotency-Replayed',
  'Location',
  'Content-Disposition',
];

/**
 * CORS for the origins of CORS_ORIGINS (`*`: any), before every other hook, so that every answer
 * to them carries it: errors, 429s and event streams included (a hijacked stream copies the
 * reply's headers). Credentials travel in headers the page sets itself (keys, tokens), never in
 * cookies, so answers never allow credentials; request headers are those the preflight asks for.
 * A preflight is answered by the plugin (204) before the rate limit or any route. None listed: no
 * CORS at all, as before, and an OPTIONS request is a 404. `/mcp` keeps its own Origin check.
 */
export async function registerCors(app: FastifyInstance, origins: string[]): Promise<void> {
  if (origins.length === 0) return;
  const options: FastifyCorsOptions = {
    origin: origins.includes('*') ? '*' : origins,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    exposedHeaders: EXPOSED_HEADERS,
    credentials: false,
    // Ten minutes: how long a browser may reuse a preflight's answer (Chromium caps it at two hours).
    maxAge: 600,
  };
  await app.register(cors, options);
}
