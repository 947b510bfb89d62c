import type { ServerResponse } from 'node:http';
import type { TErrorCode } from '@convene/contract';
import type { FastifyReply } from 'fastify';
import { errorBody } from './error-body';

/** How long a client may keep an answer. */
export type Caching = 'no-store' | 'no-cache' | 'public' | 'immutable';

const CACHE_CONTROL: Record<Caching, string> = {
  'no-store': 'no-store',
  'no-cache': 'no-cache',
  public: 'public, max-age=300',
  // A year, the customary ceiling: for URLs whose bytes never change (a content-named file, an
  // avatar drawn from its id).
  immutable: 'public, max-age=31536000, immutable',
};

/** Media types of the raw answers. */
export const MEDIA = {
  json: 'application/json; charset=utf-8',
  jwks: 'application/jwk-set+json; charset=utf-8',
  markdown: 'text/markdown; charset=utf-8',
  text: 'text/plain; charset=utf-8',
  diff: 'text/x-diff; charset=utf-8',
  html: 'text/html; charset=utf-8',
  svg: 'image/svg+xml',
} as const;

export interface RawAnswer {
  /** The media type (`MEDIA`, or another). */
  type: string;
  /** A string, or a value Fastify serialises as JSON. */
  body: unknown;
  cache?: Caching;
  /** Served as the declared type only: no content sniffing by browsers. */
  nosniff?: boolean;
  headers?: Record<string, string>;
}

/**
 * The one way a raw route answers (procedures answer through their contract): its media type,
 * caching and headers; the policy hooks add theirs (API-Version, RateLimit-*) as for every answer.
 */
export function sendRaw(
  reply: FastifyReply,
  { type, body, cache, nosniff, headers }: RawAnswer,
): FastifyReply {
  reply.type(type);
  if (cache) reply.header('Cache-Control', CACHE_CONTROL[cache]);
  if (nosniff) reply.header('X-Content-Type-Options', 'nosniff');
  if (headers) reply.headers(headers);
  return reply.send(body);
}

/**
 * A JSON error `{error, code, ...details}`, its code the status's generic one unless the body
 * names one. Raw routes throw domain errors to the app's one error handler instead; this is for
 * that handler, and for answers no domain error names (405, 503).
 */
export function sendError(
  reply: FastifyReply,
  status: number,
  { error, ...details }: { error: string; code?: TErrorCode | undefined } & Record<string, unknown>,
  headers: Record<string, string> = {},
): FastifyReply {
  return reply
    .code(status)
    .headers(headers)
    .type(MEDIA.json)
    .send(errorBody(status, error, details));
}

/** What a reply's policy stops when the reply is taken over (its request timer). */
const onTakeOver = new WeakMap<FastifyReply, () => void>();

/**
 * Runs `stop` if the reply is taken over (takeOver): a stream can stay open for hours, and what
 * only guards an answer (the request timer and its listeners) would be held all that time.
 */
export function whenTakenOver(reply: FastifyReply, stop: () => void): void {
  onTakeOver.set(reply, stop);
}

/**
 * Takes the response over for a writer of its own (an event stream, the MCP transport). A
 * hijacked reply skips onSend and does not flush headers set by the policy hooks: they are copied
 * onto the raw response first.
 */
export function takeOver(reply: FastifyReply): ServerResponse {
  reply.hijack();
  const stop = onTakeOver.get(reply);
  if (stop) {
    onTakeOver.delete(reply);
    stop();
  }
  const raw = reply.raw;
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) raw.setHeader(name, value as string | number | readonly string[]);
  }
  return raw;
}
