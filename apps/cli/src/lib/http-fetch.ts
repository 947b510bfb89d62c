import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';

/** Statuses whose answer has no body, which a Response cannot be made with. */
export const NO_BODY = new Set([101, 204, 205, 304]);
/** Redirects followed, as fetch follows them (`redirect: 'follow'`), 20 at most. */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;
/** Request headers a redirect to another origin drops, as fetch does. */
const CREDENTIALS = ['authorization', 'proxy-authorization', 'cookie'];
/** Request headers of a body, dropped with it when a redirect turns the request into a GET. */
const BODY_HEADERS = [
  'content-type',
  'content-length',
  'content-encoding',
  'content-language',
  'content-location',
];

/**
 * The fetch of a command's requests, on Node's own HTTP client. The global fetch (undici) compiles
 * its HTTP parser, WebAssembly, at a command's first request: a sixth of a short command's CPU,
 * and V8's flags to make that cheaper make Node compile its own modules again. This takes what the
 * SDK sends (a URL, a method, headers, a string body, an AbortSignal) and answers a real `Response`
 * whose body streams (an event stream is read as its events come); a request of another shape goes
 * to the global fetch. Redirects are followed as fetch follows them.
 *
 * Failures reject as fetch's do: a TypeError ("fetch failed", "terminated" for a body cut off)
 * whose `cause` carries the system's code (ECONNREFUSED, ENOTFOUND, ERR_SSL_…, HPE_… for an answer
 * that is not HTTP), a connection closed under a request said as `other side closed` (ECONNRESET).
 */
export const httpFetch: typeof fetch = async (input, init = {}) => {
  const body = init.body ?? undefined;
  const plain = typeof input === 'string' || input instanceof URL;
  if (
    !plain ||
    (body !== undefined && typeof body !== 'string') ||
    (init.redirect ?? 'follow') !== 'follow'
  ) {
    return fetch(input, init);
  }
  let url = new URL(input);
  let method = (init.method ?? 'GET').toUpperCase();
  let payload = body;
  const headers = new Headers(init.headers);
  if (payload !== undefined && !headers.has('content-type'))
    headers.set('content-type', 'text/plain;charset=UTF-8');
  for (let redirects = 0; ; redirects++) {
    const answer = await exchange(url, method, headers, payload, init.signal ?? undefined);
    const status = answer.statusCode!;
    const location = answer.headers.location;
    if (!REDIRECTS.has(status) || location === undefined) return toResponse(answer, method);
    answer.resume();
    const next = new URL(location, url);
    if (redirects === MAX_REDIRECTS || (next.protocol !== 'http:' && next.protocol !== 'https:')) {
      const why = redirects === MAX_REDIRECTS ? 'redirect count exceeded' : `redirect to ${next.protocol}`;
      throw new TypeError('fetch failed', { cause: new Error(why) });
    }
    if (next.origin !== url.origin) for (const name of CREDENTIALS) headers.delete(name);
    if ((status === 303 && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
      method = 'GET';
      payload = undefined;
      for (const name of BODY_HEADERS) headers.delete(name);
    }
    url = next;
  }
};

/** One request, and the head of its answer (its body left to read). */
async function exchange(
  url: URL,
  method: string,
  headers: Headers,
  body: string | undefined,
  signal: AbortSignal | undefined,
): Promise<IncomingMessage> {
  signal?.throwIfAborted();
  const request = url.protocol === 'https:' ? (await import('node:https')).request : httpRequest;
  const sent: Record<string, string> = Object.fromEntries(headers);
  if (body !== undefined) sent['content-length'] = String(Buffer.byteLength(body));
  const options: RequestOptions = { method, headers: sent, ...(signal ? { signal } : {}) };
  return new Promise((resolve, reject) => {
    const outgoing = request(url, options, resolve);
    outgoing.once('error', (error) => {
      reject(signal?.aborted ? signal.reason : new TypeError('fetch failed', { cause: closed(error) }));
    });
    outgoing.end(body);
  });
}

/** The answer as a Response, its body streamed as it comes and paused while nobody reads it. */
function toResponse(answer: IncomingMessage, method: string): Response {
  const headers = new Headers();
  const raw = answer.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  const status = answer.statusCode!;
  if (status < 200 || status > 599) {
    // A status no Response can hold, as fetch fails it (HTTP's statuses stop at 599).
    answer.destroy();
    throw new TypeError('fetch failed', { cause: new Error(`an answer with status ${status}`) });
  }
  const init = { status, statusText: answer.statusMessage ?? '', headers };
  if (NO_BODY.has(status) || method === 'HEAD') {
    answer.resume();
    return new Response(null, init);
  }
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let done = false;
      answer.pause();
      answer.on('data', (chunk: Buffer) => {
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) answer.pause();
      });
      answer.once('end', () => {
        if (!done) controller.close();
        done = true;
      });
      answer.once('error', (error) => {
        if (!done) controller.error(new TypeError('terminated', { cause: closed(error) }));
        done = true;
      });
    },
    pull() {
      answer.resume();
    },
    cancel() {
      answer.destroy();
    },
  });
  return new Response(body, init);
}

/**
 * Node's words for a connection closed under a request (`socket hang up`, `aborted`) put as the
 * server's side of it, `other side closed`, with the system's code kept; other errors as they are.
 */
function closed(error: Error & { code?: string }): Error {
  if (error.code !== 'ECONNRESET' || !/^(socket hang up|aborted)$/.test(error.message)) return error;
  return Object.assign(new Error('other side closed', { cause: error }), { code: error.code });
}
