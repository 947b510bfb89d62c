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
 * and V8's flags to make that cheaper make Node compile its own modules again. Merely loading it
 * (which the first `Headers` or `Response` made does) was an eighth more. This takes what the SDK
 * sends (a URL, a method, headers, a string body, an AbortSignal) and answers an `Answer`, a
 * Response of its own whose body streams (an event stream is read as its events come), so that a
 * command never loads undici; a request of another shape goes to the global fetch. Redirects are
 * followed as fetch follows them.
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
  const headers = new FetchHeaders(init.headers);
  if (payload !== undefined && !headers.has('content-type'))
    headers.set('content-type', 'text/plain;charset=UTF-8');
  for (let redirects = 0; ; redirects++) {
    const answer = await exchange(url, method, headers, payload, init.signal ?? undefined);
    const status = answer.statusCode!;
    const location = answer.headers.location;
    if (!REDIRECTS.has(status) || location === undefined)
      return toResponse(answer, method, url, redirects > 0);
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
  headers: FetchHeaders,
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
function toResponse(answer: IncomingMessage, method: string, url: URL, redirected: boolean): Response {
  const headers = new FetchHeaders();
  const raw = answer.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  const status = answer.statusCode!;
  if (status < 200 || status > 599) {
    // A status no Response can hold, as fetch fails it (HTTP's statuses stop at 599).
    answer.destroy();
    throw new TypeError('fetch failed', { cause: new Error(`an answer with status ${status}`) });
  }
  const init = { status, statusText: answer.statusMessage ?? '', headers, url: url.href, redirected };
  if (NO_BODY.has(status) || method === 'HEAD') {
    answer.resume();
    return new Answer(null, init).asResponse();
  }
  /** Closed, failed or cancelled: a chunk read before the cancel destroyed the answer is dropped. */
  let done = false;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      answer.pause();
      answer.on('data', (chunk: Buffer) => {
        // Enqueued once cancelled, it threw ERR_INVALID_STATE out of the event, uncaught: the
        // stack trace after an answer that is not Convene's (a 200 of another server).
        if (done) return;
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
      done = true;
      answer.destroy();
    },
  });
  return new Answer(body, init).asResponse();
}

/**
 * Node's words for a connection closed under a request (`socket hang up`, `aborted`) put as the
 * server's side of it, `other side closed`, with the system's code kept; other errors as they are.
 */
function closed(error: Error & { code?: string }): Error {
  if (error.code !== 'ECONNRESET' || !/^(socket hang up|aborted)$/.test(error.message)) return error;
  return Object.assign(new Error('other side closed', { cause: error }), { code: error.code });
}

/** What HTTP takes as a header's name (RFC 9110's token). */
const TOKEN = /^[!#$%&'*+.^`|~\w-]+$/;
/** A header's value as fetch sends it, trimmed: no line break, NUL or other control, nothing beyond Latin-1. */
const VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** What fetch trims off a header's value. */
const SPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/**
 * Fetch's `Headers` without fetch: by name in any case, the values of a name appended kept in
 * order and read joined with ", " (`set-cookie`'s apart, getSetCookie), names and values checked
 * and trimmed as `Headers` does (a TypeError). Node's own `Headers` is undici's, which the first
 * one made loads whole (see httpFetch).
 */
export class FetchHeaders {
  private readonly byName = new Map<string, string[]>();

  constructor(init?: RequestInit['headers'] | FetchHeaders) {
    if (!init) return;
    const pairs: Iterable<readonly [string, string]> | [string, string][] = Array.isArray(init)
      ? (init as [string, string][])
      : typeof (init as Headers).forEach === 'function' && Symbol.iterator in init
        ? (init as Iterable<[string, string]>)
        : Object.entries(init as Record<string, string>);
    for (const pair of pairs) {
      if (pair.length !== 2) throw new TypeError('Headers: each pair needs a name and a value');
      this.append(pair[0], pair[1]);
    }
  }

  private static checked(name: string, value: string): [string, string] {
    const trimmed = String(value).replace(SPACE, '');
    if (!TOKEN.test(name)) throw new TypeError(`Headers: "${name}" is an invalid header name`);
    if (!VALUE.test(trimmed)) throw new TypeError(`Headers: the value of "${name}" is invalid`);
    return [name.toLowerCase(), trimmed];
  }

  append(name: string, value: string): void {
    const [key, checked] = FetchHeaders.checked(name, value);
    const list = this.byName.get(key);
    if (list) list.push(checked);
    else this.byName.set(key, [checked]);
  }

  set(name: string, value: string): void {
    const [key, checked] = FetchHeaders.checked(name, value);
    this.byName.set(key, [checked]);
  }

  delete(name: string): void {
    this.byName.delete(name.toLowerCase());
  }

  get(name: string): string | null {
    return this.byName.get(name.toLowerCase())?.join(', ') ?? null;
  }

  getSetCookie(): string[] {
    return [...(this.byName.get('set-cookie') ?? [])];
  }

  has(name: string): boolean {
    return this.byName.has(name.toLowerCase());
  }

  forEach(callback: (value: string, key: string, parent: FetchHeaders) => void, thisArg?: unknown): void {
    for (const [key, value] of this) callback.call(thisArg, value, key, this);
  }

  /** In the order of their names, `set-cookie` once for each of its values, as `Headers` iterates. */
  *entries(): IterableIterator<[string, string]> {
    for (const key of [...this.byName.keys()].sort()) {
      if (key === 'set-cookie') for (const value of this.byName.get(key)!) yield [key, value];
      else yield [key, this.get(key)!];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}

/** What an Answer is made of besides its body. */
export interface AnswerInit {
  status: number;
  statusText?: string;
  headers?: FetchHeaders;
  url?: string;
  redirected?: boolean;
}

/**
 * A Response without fetch (see FetchHeaders): what the SDK and the commands read of an answer,
 * its status, headers and body, streamed or read whole once (`bodyUsed`, then a TypeError), as
 * fetch's Response does. `asResponse()` gives it the type the SDK's fetch is declared with.
 */
export class Answer {
  readonly type = 'basic';
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly headers: FetchHeaders;
  readonly url: string;
  readonly redirected: boolean;
  private used = false;

  constructor(
    private stream: ReadableStream<Uint8Array> | null,
    init: AnswerInit,
  ) {
    this.status = init.status;
    this.ok = init.status >= 200 && init.status <= 299;
    this.statusText = init.statusText ?? '';
    this.headers = init.headers ?? new FetchHeaders();
    this.url = init.url ?? '';
    this.redirected = init.redirected ?? false;
  }

  /** An answer whose body is `text`, whole. */
  static of(text: string, init: AnswerInit): Answer {
    const bytes = new TextEncoder().encode(text);
    return new Answer(
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes);
          controller.close();
        },
      }),
      init,
    );
  }

  get body(): ReadableStream<Uint8Array> | null {
    return this.stream;
  }

  get bodyUsed(): boolean {
    return this.used;
  }

  asResponse(): Response {
    return this as unknown as Response;
  }

  async bytes(): Promise<Uint8Array<ArrayBuffer>> {
    if (this.used || this.body?.locked) throw new TypeError('Body is unusable: Body has already been read');
    this.used = true;
    if (!this.body) return new Uint8Array(0);
    const chunks: Uint8Array[] = [];
    for await (const chunk of this.body) chunks.push(chunk);
    // One buffer of its own (a Buffer's may be a slice of a shared pool, which arrayBuffer() would hand out).
    return new Uint8Array(await new Blob(chunks).arrayBuffer());
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    return (await this.bytes()).buffer;
  }

  /** As UTF-8, a leading byte order mark dropped, as fetch reads text. */
  async text(): Promise<string> {
    return new TextDecoder().decode(await this.bytes());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async blob(): Promise<Blob> {
    return new Blob([await this.bytes()], { type: this.headers.get('content-type') ?? '' });
  }

  async formData(): Promise<never> {
    throw new TypeError("formData() is not supported by convene's fetch");
  }

  /** A second answer with the same body: each reads it, as Response's clone gives. */
  clone(): Answer {
    if (this.used || this.body?.locked)
      throw new TypeError('Response.clone: Body has already been consumed.');
    let body: ReadableStream<Uint8Array> | null = null;
    if (this.body) {
      const [mine, theirs] = this.body.tee();
      this.stream = mine;
      body = theirs;
    }
    return new Answer(body, {
      status: this.status,
      statusText: this.statusText,
      headers: new FetchHeaders(this.headers),
      url: this.url,
      redirected: this.redirected,
    });
  }
}
