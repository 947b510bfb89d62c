import { APIPromise, type WithResponse } from './api-promise';
import {
  AbortError,
  ConnectionError,
  ConveneError,
  errorFromResponse,
  type RateLimitError,
  retryAfterSeconds,
  TimeoutError,
} from './errors';
import { type OperationId, type OperationTypes, type Route, routes } from './generated';
import {
  afterRetryAfterMs,
  backoffMs,
  type Logger,
  type LogLevel,
  levelled,
  linkedController,
  neverSent,
  refuseMisplacedOptions,
  retryableStatus,
  setField,
  showAs,
  sleep,
  timerMs,
  urlOf,
  uuid4,
} from './internal';

export interface ClientOptions {
  /** Where the service runs, an absolute http(s) URL such as `https://convene.example.com` (a path prefix is kept). */
  baseUrl: string;
  /**
   * A `usr_` token from the link flow or the dashboard: sent as `X-User-Token` when creating and
   * joining spaces (so they show on that human's dashboard) and to recover keys. Identity only.
   */
  userToken?: string | undefined;
  /**
   * A fetch implementation (the browser's own `window.fetch` too); defaults to the global one.
   * It is called as a plain function, with no `this`.
   */
  fetch?: typeof fetch | undefined;
  /** How long one attempt may wait for its answer, in ms (default 60 000; `Infinity`: no limit). */
  timeoutMs?: number | undefined;
  /** Retries after a network error, 408, 429 or 5xx (default 2). */
  maxRetries?: number | undefined;
  /**
   * The longest `Retry-After` a retry waits out, in ms (default 60 000): a 429 or 503 asking for
   * longer is thrown at once, its `retryAfter` saying when to try again. With `5_000`, a call
   * waits a few seconds at most, however the server's limit (a rate limit's window, a space's
   * message budget) has longer to run. Long-lived loops (a stream, `inbox.follow()`) wait any
   * Retry-After between their attempts: their `maxOutageMs` decides when they give up.
   */
  maxRetryAfterMs?: number | undefined;
  /** Where retries, warnings and (at `debug`) requests are reported (default `console`). */
  logger?: Logger | undefined;
  /**
   * The least severe level reported (default `warn`; `info` shows every retry; `debug` also each
   * request: operation, method, URL, status, duration and Request-Id, never a key, token or body).
   */
  logLevel?: LogLevel | undefined;
  /** Headers added to every request (but an Idempotency-Key: each write has its own, `idempotencyKey`). */
  headers?: Record<string, string> | undefined;
}

/** Per-call options, the last argument of every method. */
export interface RequestOptions {
  /** Ends the call (and any retry wait) with an AbortError. */
  signal?: AbortSignal | undefined;
  /** How long each attempt of this call may wait for its answer, in ms (default: the client's `timeoutMs`). */
  timeoutMs?: number | undefined;
  /** Retries of this call after a network error, 408, 429 or 5xx (default: the client's `maxRetries`; `0` for none). */
  maxRetries?: number | undefined;
  /** The longest `Retry-After` this call waits out (default: the client's `maxRetryAfterMs`). */
  maxRetryAfterMs?: number | undefined;
  /**
   * The Idempotency-Key of a write; a fresh UUID by default. The same key is sent on every retry
   * of one call, so the server runs the write once and replays its answer. The writes the server
   * never replays (`spaces.create`, `link.start`, and the anonymous `pollLink`, `signup`, `login`,
   * `ask`) are sent without one, whatever is given here. The key is this option's: an
   * `Idempotency-Key` among the `headers` (the client's or the call's) is never sent.
   */
  idempotencyKey?: string | undefined;
  /**
   * Headers of this call, added to the client's `headers` (a name given in both, in any case, is
   * sent with this call's value).
   */
  headers?: Record<string, string> | undefined;
}

/** The credentials a call presents: each becomes its header. */
export interface Credentials {
  spaceKey?: string | undefined;
  userToken?: string | undefined;
  /** A dashboard JWT (`Authorization: Bearer`). */
  bearer?: string | undefined;
  pollToken?: string | undefined;
}

export interface Call<K extends OperationId> {
  path?: OperationTypes[K]['path'];
  params?: OperationTypes[K]['params'] | undefined;
  credentials?: Credentials;
}

export const API_VERSION = '1';

export interface ResolvedOptions {
  baseUrl: string;
  fetch: typeof fetch;
  timeoutMs: number;
  maxRetries: number;
  maxRetryAfterMs: number;
  logger: Logger;
  headers: Record<string, string>;
}

/**
 * Why a 404 may have come, when an id of the call's path is no UUID (every id of the API is one):
 * the thing was given by another name (its `url` has the value, as every error of a call has).
 */
function notAnId(path: Record<string, string> | undefined): string {
  const name = Object.keys(path ?? {}).find(
    (key) =>
      key.endsWith('Id') &&
      !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(path![key]!),
  );
  if (!name) return '';
  return ` (${name} takes an id, a UUID${name === 'artifactId' ? ': artifacts.list() has them' : ''})`;
}

/** Sends the operations of the route table: URLs, headers, retries, timeouts, errors. */
export class Transport {
  declare readonly options: ResolvedOptions;
  declare private warnedDeprecation: boolean | undefined;

  constructor(options: ClientOptions) {
    if (!options?.baseUrl) throw new ConveneError('baseUrl is required, e.g. new Convene({ baseUrl })');
    // Said now: fetch would refuse each request ("unknown scheme"), and the SDK take that for a
    // connection failure and retry it before throwing a ConnectionError.
    if (!/^https?:$/.test(urlOf(options.baseUrl)?.protocol ?? ''))
      throw new ConveneError(
        `baseUrl must be an absolute http(s) URL (http://localhost:3000, location.origin), got ${options.baseUrl}`,
      );
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function') throw new ConveneError('no fetch: pass the `fetch` option');
    this.options = {
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      // Called as a plain function, never as a method of these options: a browser's own fetch
      // (the global one, or `window.fetch` passed in) throws "Illegal invocation" when its `this`
      // is any object but the window.
      fetch: (input, init) => fetchImpl(input, init),
      timeoutMs: options.timeoutMs ?? 60_000,
      maxRetries: options.maxRetries ?? 2,
      maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
      logger: levelled(options.logger ?? console, options.logLevel ?? 'warn'),
      headers: options.headers ?? {},
    };
    showAs(Transport, 'Transport');
  }

  get logger(): Logger {
    return this.options.logger;
  }

  /**
   * The server only: a client object logged or saved as JSON never carries the headers (an
   * `Authorization` of yours), the fetch or the logger.
   */
  toJSON(): { baseUrl: string } {
    return { baseUrl: this.options.baseUrl };
  }

  url(route: Route, path: Record<string, string> | undefined, query?: Record<string, unknown>): string {
    const filled = route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = path?.[name];
      if (typeof value !== 'string' || value === '') throw new ConveneError(`${name} is required`);
      return encodeURIComponent(value);
    });
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== null) search.set(name, String(value));
    }
    const qs = search.toString();
    return `${this.options.baseUrl}${filled}${qs ? `?${qs}` : ''}`;
  }

  /**
   * What an AbortError says of the call a signal ended, as every error names a request: `aborted
   * (getJoinStatus: GET http://…)`, its operation, method and URL (without credentials).
   */
  aborted(operationId: OperationId, path?: Record<string, string>): string {
    const route: Route = routes[operationId];
    return `aborted (${operationId}: ${route.method} ${withoutCredentials(this.url(route, path))})`;
  }

  /** Calls one operation; the returned APIPromise resolves with its data. */
  call<K extends OperationId>(
    operationId: K,
    call: Call<K>,
    options?: RequestOptions,
  ): APIPromise<OperationTypes[K]['output']> {
    // `?? {}`, not a default value: plain JavaScript passes null for "no options" too.
    return new APIPromise(this.send(operationId, call, options ?? {}));
  }

  /** One call: its first attempt, and the retries its failures allow. */
  private async send<K extends OperationId>(
    operationId: K,
    { path, params, credentials }: Call<K>,
    options: RequestOptions,
  ): Promise<WithResponse<OperationTypes[K]['output']>> {
    refuseMisplacedOptions(operationId, params);
    const route: Route = routes[operationId];
    const isWrite = route.method !== 'GET';
    const url = this.url(
      route,
      path as Record<string, string> | undefined,
      isWrite ? undefined : (params as Record<string, unknown> | undefined),
    );
    // The URL as sent (ids filled in, not the route's template), without any user:password in it.
    const shownUrl = withoutCredentials(url);
    /**
     * The client's headers, the credentials', then the call's own: a record by lower-case name, the
     * last one set of a name winning, as a `Headers` would hold them. Not a `Headers`, whose first
     * use in Node loads the whole of its fetch (undici), which a client's own fetch may not be: in
     * the CLI, that was an eighth of a short command's CPU.
     */
    const headers: Record<string, string> = { accept: 'application/json', 'api-version': API_VERSION };
    /**
     * A value fetch cannot send, trimmed as `Headers` trims it (a line break or another control
     * character inside, a character beyond Latin-1: an emoji in an idempotencyKey, a key read with
     * its file's line breaks), is refused as the SDK's own error, naming the header but never the
     * value, which may be a secret.
     */
    const set = (name: string, value: string) => {
      value = `${value}`.trim();
      if (/[^\t -~\x80-\xff]/.test(value))
        throw new ConveneError(
          `${operationId}: the ${name} header cannot be sent as given (a line break, or a character beyond Latin-1)`,
          { operation: operationId, method: route.method, url: shownUrl },
        );
      headers[name.toLowerCase()] = value;
    };
    for (const [name, value] of Object.entries(this.options.headers)) set(name, value);
    if (credentials?.spaceKey) set('X-Private-Key', credentials.spaceKey);
    if (credentials?.userToken) set('X-User-Token', credentials.userToken);
    if (credentials?.bearer) set('Authorization', `Bearer ${credentials.bearer}`);
    if (credentials?.pollToken) set('X-Poll-Token', credentials.pollToken);
    for (const [name, value] of Object.entries(options.headers ?? {})) set(name, value);
    // One key per logical call, the same on every retry: the server runs the write once. The
    // writes it never replays (createSpace, startLink, the anonymous ones) go without one, and
    // reads too, whatever headers say: it would promise a retry what the server does not keep.
    // The key is `idempotencyKey`: one among the headers is not sent.
    delete headers['idempotency-key'];
    if (isWrite && route.idempotent) set('Idempotency-Key', options.idempotencyKey ?? uuid4());
    let body: string | undefined;
    if (isWrite) {
      if (params !== undefined) {
        body = JSON.stringify(params);
        headers['content-type'] = 'application/json';
      }
    }
    const idempotencyKey = headers['idempotency-key'];
    const maxRetries = options.maxRetries ?? this.options.maxRetries;
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs;
    const what = `${route.method} ${shownUrl}`;
    // Which call the caller's signal ended, as the other errors name it.
    const aborted = `aborted (${operationId}: ${what})`;
    /**
     * Logs one attempt at `debug`: the operation, its method and URL as errors show them (ids
     * filled in, no `user:password`; keys and tokens travel in headers, never in a URL), the
     * status or why none came, how long it took, and the server's Request-Id. Never a header or a
     * body.
     */
    const traced = (started: number, outcome: Response | string) => {
      const requestId = typeof outcome === 'string' ? null : outcome.headers.get('request-id');
      this.logger.debug(
        `${operationId}: ${what} → ${typeof outcome === 'string' ? outcome : outcome.status} ` +
          `(${Date.now() - started} ms${requestId ? `, Request-Id ${requestId}` : ''})`,
      );
    };
    /**
     * The first failure after which the server may have run the request (it went out and no
     * answer came, or a 5xx): a later refused attempt does not undo it.
     */
    let uncertain: string | undefined;

    try {
      for (let attempt = 0; ; attempt++) {
        if (options.signal?.aborted) throw new AbortError(aborted, { cause: options.signal.reason });
        const { controller, release } = linkedController(options.signal);
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          controller.abort();
        }, timerMs(timeoutMs));
        const started = Date.now();
        let response: Response | undefined;
        let text = '';
        /** The attempt's failure, and the pause before the next attempt (none: it is thrown). */
        let failure: ConveneError;
        let delay: number | undefined;
        try {
          response = await this.options.fetch(url, {
            method: route.method,
            headers,
            ...(body === undefined ? {} : { body }),
            signal: controller.signal,
          });
          // The body is read under the same timeout: an answer cut off midway is no answer. An
          // event stream's body is its events, which the stream reads: only its headers are timed.
          if (!(route.response === 'event-stream' && response.ok)) text = await response.text();
        } catch (error) {
          response = undefined;
          if (options.signal?.aborted) {
            traced(started, 'aborted');
            // The request was out: the server may have run it.
            uncertain ??= 'aborted';
            throw new AbortError(aborted, { cause: options.signal.reason });
          }
          const why = timedOut ? `no answer within ${timeoutMs} ms` : describeNetworkError(error);
          traced(started, why);
          const code = networkErrorCode(error);
          const refused = neverSent(code);
          // A write refused after an attempt that may have run says so: its code alone reads as
          // "nothing ran". A read changes nothing, whether it ran or not.
          const before =
            uncertain && refused && isWrite ? `; an earlier attempt may have run (${uncertain})` : '';
          if (!refused) uncertain ??= why;
          failure = new (timedOut ? TimeoutError : ConnectionError)(
            `${why} (${operationId}: ${what})${before}`,
            {
              cause: error,
              operation: operationId,
              method: route.method,
              url: shownUrl,
              code,
              mayHaveRun: uncertain !== undefined,
            },
          );
          // The server may have run the request: send it again only if that is harmless.
          if (attempt < maxRetries && (route.idempotent || refused)) delay = backoffMs(attempt);
        } finally {
          clearTimeout(timer);
          release();
        }

        if (response) {
          traced(started, response);
          // A server that announces this API version deprecated: said once per client.
          if (!this.warnedDeprecation && response.headers.has('deprecation')) {
            this.warnedDeprecation = true;
            const sunset = response.headers.get('sunset');
            this.logger.warn(
              `API version ${API_VERSION} is deprecated${sunset ? ` (sunset ${sunset})` : ''}: upgrade @convene/sdk`,
            );
          }
          if (response.ok) {
            // It ran: said of an answer that turns out not to be JSON (a proxy's page with a 200).
            uncertain ??= 'answered';
            return { data: parse(what, route, response, text) as OperationTypes[K]['output'], response };
          }
          const status = response.status;
          failure = errorFromResponse(status, response.headers, text);
          // A 404 for an id that is none (a document's name given for its id) says what it was.
          if (status === 404) failure.message += notAnId(path as Record<string, string> | undefined);
          // 408, 429 and a server's refusal while it shuts down come before anything runs; any
          // other 5xx may have run partway.
          const unrun = status === 408 || status === 429 || refusedWhileClosing(failure);
          const retryDelay = retryDelayMs(
            response.headers,
            attempt,
            options.maxRetryAfterMs ?? this.options.maxRetryAfterMs,
          );
          if (status >= 500 && !unrun) uncertain ??= `answered ${failure.message}`;
          if (attempt < maxRetries && retryableStatus(status) && (route.idempotent || unrun))
            delay = retryDelay;
        }
        if (delay === undefined) {
          // When to try again, as a 429's or a 503's `retryAfter` says it, unless the server's
          // words say when already (`retry in a second`; not `retry shortly`): in the error thrown
          // only, not in the line below, which says the wait it makes.
          const wait = (failure! as RateLimitError).retryAfter;
          if (wait !== undefined && !/(retry|again) (after|in) /i.test(failure!.message))
            failure!.message += ` (retry after ${Math.ceil(wait)} s)`;
          throw failure!;
        }
        // Said after the failure, whose message names the request already; a wait the caller would
        // notice (a Retry-After of 5 s or more) at the default level, with the server's reason:
        // which limit (the rate limit, a space's message budget).
        this.logger[response && delay >= 5_000 ? 'warn' : 'info'](
          `${response ? `${operationId}: ${what} answered ` : ''}${failure!.message}; ` +
            `retrying in ${Math.round(delay)} ms (retry ${attempt + 1} of ${maxRetries})`,
        );
        await sleep(delay, options.signal, aborted);
      }
    } catch (error) {
      if (error instanceof ConveneError) {
        // Which call failed, as a ConnectionError says it: an answer's error, an abort.
        if (!error.operation) {
          setField(error, 'operation', operationId);
          setField(error, 'method', route.method);
          setField(error, 'url', shownUrl);
        }
        // What a caller needs to try the same write again safely, whatever went wrong.
        if (idempotencyKey) setField(error, 'idempotencyKey', idempotencyKey);
        // Known of every error of the call, not only a ConnectionError: a 429, a 409 or an
        // AbortError may follow an attempt cut off after the request went out.
        if (uncertain !== undefined) setField(error, 'mayHaveRun', true);
      }
      throw error;
    }
  }
}

/**
 * A 503 by which a Convene server shutting down refused the request before running it: coded
 * `shutting_down` (a request arriving while it closes, a long wait it cut off, a stream or `/mcp`
 * it no longer opens). Any other 503 (its database away, a request that ran too long) may have run.
 */
export function refusedWhileClosing(failure: ConveneError): boolean {
  return failure.status === 503 && failure.code === 'shutting_down';
}

/** A URL to show: the same, less any `user:password@` it carries. */
export function withoutCredentials(url: string): string {
  const parsed = urlOf(url);
  if (!parsed || (!parsed.username && !parsed.password)) return url;
  parsed.username = '';
  parsed.password = '';
  return parsed.href;
}

function parse(what: string, route: Route, response: Response, text: string): unknown {
  const kind = route.response;
  if (kind === 'json') {
    if (response.status === 204 || text === '') return undefined;
    try {
      return JSON.parse(text);
    } catch {}
    // A proxy's page or an app's fallback answered with a 200 is no stream, document or diff.
  } else if (response.headers.get('content-type')?.startsWith(`text/${kind === 'diff' ? 'x-' : ''}${kind}`))
    return text;
  // An event stream's body is still unread: it is let go.
  if (!response.bodyUsed) void response.body?.cancel();
  throw new ConveneError(`${what}: the answer is not ${kind === 'json' ? 'JSON' : kind}`, {
    status: response.status,
    headers: response.headers,
  });
}

/**
 * The pause before a call's next attempt: what Retry-After asks, with a little jitter above it,
 * else the backoff (exponential, with jitter). Undefined: do not retry, as for a Retry-After beyond
 * `maxMs` (a minute unless the client or the call says otherwise), thrown at once.
 */
export function retryDelayMs(
  headers: Headers | undefined,
  attempt: number,
  maxMs: number,
): number | undefined {
  const retryAfter = retryAfterSeconds(headers);
  if (retryAfter === undefined) return backoffMs(attempt);
  const ms = retryAfter * 1000;
  return ms <= maxMs ? afterRetryAfterMs(ms) : undefined;
}

/**
 * A network error in a sentence: the system's words (`connect ECONNREFUSED 127.0.0.1:3000`,
 * `getaddrinfo ENOTFOUND …`), which Node's fetch puts in the cause of its "fetch failed", else
 * the error's own message (a browser's "Failed to fetch").
 */
export function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause;
  if (cause instanceof Error) {
    // Connecting to every address of a name fails as an AggregateError, often without a message.
    const first = cause instanceof AggregateError ? cause.errors.find((e) => e instanceof Error) : undefined;
    const code = networkErrorCode(cause);
    const words = cause.message || (first as Error | undefined)?.message || code;
    // Without a system code ("bad port", "invalid onRequestStart method"), fetch's words frame them.
    if (words) return code ? words : `${error.message}: ${words}`;
  }
  return error.message;
}

/** The system's error code of a network failure (`ECONNREFUSED`), looked for along its causes. */
export function networkErrorCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return code;
    const next = (e as { cause?: unknown }).cause;
    e = next ?? (e instanceof AggregateError ? e.errors[0] : undefined);
  }
  return undefined;
}
