// Small helpers of the transport, on web-standard APIs only (Node 20+, Deno, Bun, browsers).
import { AbortError, ConveneError, retryAfterSeconds } from './errors';

/** A version 4 UUID; `crypto.randomUUID` exists only in secure contexts, so fall back to getRandomValues. */
export function uuid4(): string {
  const crypto = globalThis.crypto;
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(31));
  let i = 0;
  // A random hex digit for each x; 4, the version; y, the variant: 8, 9, a or b.
  return 'xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx'.replace(/[xy]/g, (c) =>
    (c === 'x' ? bytes[i++]! & 15 : (bytes[i++]! & 3) | 8).toString(16),
  );
}

/** `url` parsed, or undefined when it is not an absolute URL. */
export function urlOf(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

/**
 * A delay as setTimeout keeps it: at most 2^31 - 1 ms (24.8 days). A longer one, `Infinity` too,
 * fires at once in Node and browsers: a timeout of `Infinity` timed out on the spot.
 */
export const timerMs = (ms: number): number => Math.min(ms, 2_147_483_647);

/** Waits `ms`, or rejects with AbortError (`message`) as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal, message = 'aborted'): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbortError(message, { cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Whether an answer with this status may be tried again: a timeout (408), a rate limit (429) or a
 * server error (5xx). Whether it is harmless to is another question (an idempotent operation, or
 * one the answer says never ran).
 */
export const retryableStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500;

/**
 * The pause before retry number `attempt` (0 for the first retry), in whole ms: `firstMs` (0.5 s)
 * · 2^attempt, capped at `capMs` (8 s), less up to a quarter at random so that clients failing
 * together do not retry together.
 */
export function backoffMs(attempt: number, capMs = 8000, firstMs = 500): number {
  const base = Math.min(firstMs * 2 ** attempt, capMs);
  return Math.round(base * (1 - Math.random() * 0.25));
}

/**
 * The pause before a long-lived loop's reconnection attempt number `attempt` (0 for the first).
 * The longest pause between two attempts of a long-lived loop (a stream, `inbox.follow()`) to get
 * its server back is 2.5 s: a server that returns is found within this, where a call's 8 s would
 * leave a live agent seconds behind (trial s25, finding 6).
 */
export const reconnectDelayMs = (attempt: number): number => backoffMs(attempt, 2500);

/**
 * The pause a Retry-After of `ms` asks for, plus up to a quarter more at random (at most a second
 * more): the clients of one restarted server, all told "2", do not come back in the same instant.
 * Never less than asked; whole ms.
 */
export const afterRetryAfterMs = (ms: number): number =>
  Math.ceil(ms + Math.random() * Math.min(ms / 4, 1000));

/**
 * An AbortController that also aborts when one of `parents` does (AbortSignal.any is missing from
 * some runtimes the SDK supports), with its reason; `release` detaches it from them once the
 * request is over.
 */
export function linkedController(...parents: (AbortSignal | undefined)[]): {
  controller: AbortController;
  release: () => void;
} {
  const controller = new AbortController();
  const releases = parents.map((parent) => {
    const abort = () => controller.abort(parent?.reason);
    if (parent?.aborted) abort();
    else parent?.addEventListener('abort', abort, { once: true });
    return () => parent?.removeEventListener('abort', abort);
  });
  return {
    controller,
    release: () => {
      for (const release of releases) release();
    },
  };
}

/**
 * An async generator started with a signal of its own, which its caller's `signal` aborts and so
 * do its iterator's `return()` and `throw()`. A generator suspended in an `await` takes a
 * `return()` only once that await settles: a caller that gives up on a pending `next()` (a
 * timeout, a race of several streams) would otherwise leave the connection or long poll open
 * until the next event, holding one of the key's open streams meanwhile. `break` and exceptions
 * in a `for await` call `return()` too, where it changes nothing.
 */
export function stoppable<T, R>(
  signal: AbortSignal | undefined,
  start: (stop: AbortSignal) => AsyncGenerator<T, R, undefined>,
): AsyncGenerator<T, R, undefined> {
  const { controller, release } = linkedController(signal);
  const generator = start(controller.signal);
  const methods = generator as unknown as Record<string, (value: unknown) => Promise<IteratorResult<T, R>>>;
  for (const name of ['next', 'return', 'throw']) {
    const own = methods[name]!.bind(generator);
    // Once it has ended, however it ended, it no longer listens to the caller's signal.
    methods[name] = (value) => {
      if (name !== 'next') controller.abort();
      return own(value).then(
        (result) => {
          if (result.done) release();
          return result;
        },
        (error: unknown) => {
          release();
          throw error;
        },
      );
    };
  }
  return generator;
}

/** What `onDisconnect` is told: why the server is out of reach, and the attempt made next. */
export interface DisconnectInfo {
  error: ConveneError;
  /** The attempt about to be made: 1 right after contact is lost. */
  attempt: number;
  /** How long the loop waits before that attempt, in whole ms. */
  delayMs: number;
}

/**
 * The hooks of a loop that waits on the server for long and outlasts its restarts (a join's or a
 * link's `wait()`, `inbox.follow()`, `messages.stream()`): what tells a server that does not answer
 * from one that has nothing new yet. `Reconnected` is what `onReconnect` is told (a stream's
 * ReconnectInfo adds its `lastEventId`).
 */
export interface OutageHooks<Reconnected extends { attempts: number } = { attempts: number }> {
  /**
   * Called when contact with the server is lost (`attempt` 1), then after each further attempt
   * that fails (`attempt` 2, 3…), each time before waiting `delayMs` to try again. Contact is lost
   * when a call gets no answer or a 5xx, or when a stream's live connection drops or ends (a
   * ConnectionError) or falls silent (a TimeoutError). Not called for a stream's first connection,
   * whose errors are thrown, nor when a loop ends.
   */
  onDisconnect?: ((info: DisconnectInfo) => void) | undefined;
  /**
   * Called once the server answers again after `onDisconnect`, `attempts` being how many tries it
   * took (for a stream, each time it is connected again: its events resume after `lastEventId`).
   */
  onReconnect?: ((info: Reconnected) => void) | undefined;
}

/**
 * When a long-lived loop (`messages.stream()`, `inbox.follow()`) stops trying to get back a
 * server it has lost, and throws the last error: the same options on both. (A stream's first
 * connection is not a loss: it is retried as any call is, `maxRetries`, and then thrown.)
 */
export interface ReconnectOptions {
  /**
   * How long to keep trying, in ms, counted from the first failure of an outage (default 600 000:
   * ten minutes, enough for a slow restart or deploy; `Infinity` never gives up). Attempts are at
   * most 2.5 s apart (jittered), so a server that comes back is found within about 2.5 s.
   */
  maxOutageMs?: number | undefined;
  /**
   * How many attempts in a row to make at getting the server back before giving up, whatever the
   * time (default: no such limit; `0` gives up at the first loss, without trying again).
   */
  maxReconnects?: number | undefined;
}

/**
 * The give-up rule of a long-lived loop (ReconnectOptions): `lost()` when contact is lost (the
 * outage's clock starts, unless it runs), `found()` when it is back, and `exhausted(attempts)`
 * whether, with that many attempts at getting it back failed since, the loop ends rather than
 * trying again. `delay` is the pause before the next attempt.
 */
export function reconnectPolicy(options: ReconnectOptions): {
  lost(): void;
  found(): void;
  exhausted(failedAttempts: number): boolean;
  /**
   * The pause after `failedAttempts` failures in a row (1 for the first), the last answered with
   * `headers`: the backoff (at most 2.5 s), or what its Retry-After asks if longer, however long,
   * since the loop's own limits, not the client's `maxRetryAfterMs`, decide when it gives up
   * (but never past the outage's end, to give up then). Never shorter than the backoff: a
   * Retry-After of 0 does not make a loop hammer the server.
   */
  delay(headers: Headers | undefined, failedAttempts: number): number;
  /** The limits, in words, for the logs: `600 s` and, if set, `or 30 attempts`. */
  readonly limits: string;
} {
  // By default ten minutes: a slow restart or deploy.
  const maxOutageMs = options.maxOutageMs ?? 10 * 60_000;
  const maxReconnects = options.maxReconnects ?? Number.POSITIVE_INFINITY;
  let since: number | undefined;
  const time = Number.isFinite(maxOutageMs) ? `${Math.round(maxOutageMs / 1000)} s` : 'ever';
  return {
    lost() {
      since ??= Date.now();
    },
    found() {
      since = undefined;
    },
    exhausted(failedAttempts) {
      return failedAttempts >= maxReconnects || (since !== undefined && Date.now() - since >= maxOutageMs);
    },
    delay(headers, failedAttempts) {
      const retryAfter = retryAfterSeconds(headers);
      const wait = Math.max(
        reconnectDelayMs(failedAttempts - 1),
        retryAfter === undefined ? 0 : afterRetryAfterMs(retryAfter * 1000),
      );
      return since === undefined ? wait : Math.max(0, Math.min(wait, since + maxOutageMs - Date.now()));
    },
    limits: Number.isFinite(maxReconnects) ? `${time} or ${maxReconnects} attempts` : time,
  };
}

/**
 * Why a long-running loop (`messages.stream()`, `inbox.follow()`) ended by itself, without an
 * error: read it as the loop's `ended` once the loop is over. `aborted`: your signal aborted.
 * `closed`: the space closed or expired (the stream's `space-closed` event, or a refusal coded
 * `space_closed` or `space_expired`). `kicked`, `left`: your own participant was removed, or left
 * (the stream's `participant-status` event, when the client knows its participantId, or a refusal
 * coded `participant_removed` or `participant_left`). `refused`: the server no longer takes the
 * key for another reason. `error` is the server's refusal when one told it (an
 * AuthenticationError mostly; its `code` says which).
 */
export type LoopEnd =
  | { reason: 'aborted'; error?: undefined }
  | { reason: 'closed' | 'kicked' | 'left'; error?: ConveneError | undefined }
  | { reason: 'refused'; error: ConveneError };

/** How a loop ends on the server's refusal of its key: by the refusal's code, whatever its status. */
export const refusalEnd = (error: ConveneError): LoopEnd => ({
  reason:
    error.code === 'participant_removed'
      ? 'kicked'
      : error.code === 'participant_left'
        ? 'left'
        : error.code === 'space_closed' || error.code === 'space_expired'
          ? 'closed'
          : 'refused',
  error,
});

/** Counts a loop's failures in a row and tells its hooks when contact is lost and found again. */
export function outage<Reconnected extends { attempts: number }>(
  hooks: OutageHooks<Reconnected>,
): {
  failed(error: ConveneError, delayMs: number): void;
  /** `more`: what else `onReconnect` is told (a stream's `lastEventId`). */
  answered(more?: Omit<Reconnected, 'attempts'>): void;
} {
  let failures = 0;
  return {
    failed(error, delayMs) {
      failures += 1;
      hooks.onDisconnect?.({ error, attempt: failures, delayMs });
    },
    answered(more) {
      if (failures === 0) return;
      const attempts = failures;
      failures = 0;
      hooks.onReconnect?.({ attempts, ...more } as Reconnected);
    },
  };
}

/**
 * Whether a failed fetch certainly never reached the server (the connection was refused or the
 * name did not resolve), by its system code (networkErrorCode), so that even a call the server
 * would run twice may be sent again. Only Node's undici and Bun give one; elsewhere a failure
 * stays ambiguous.
 */
export const neverSent = (code: string | undefined): boolean =>
  ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ConnectionRefused'].includes(code!);

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'off';

/**
 * Where the client reports retries, warnings and (at `debug`) each request; `console` fits. Never
 * given keys, tokens or bodies.
 */
export interface Logger {
  debug(message: string, ...rest: unknown[]): void;
  info(message: string, ...rest: unknown[]): void;
  warn(message: string, ...rest: unknown[]): void;
  error(message: string, ...rest: unknown[]): void;
}

const levels: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, off: 4 };

/** A logger that drops messages below `level`. */
export function levelled(logger: Logger, level: LogLevel): Logger {
  const at =
    (name: Exclude<LogLevel, 'off'>) =>
    (message: string, ...rest: unknown[]) => {
      if (levels[name] >= levels[level]) logger[name](`[convene] ${message}`, ...rest);
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** Sets a field the constructor did not (enumerable, as the constructor's are), and returns `target`. */
export function setField<T extends object>(target: T, name: string, value: unknown): T {
  return Object.defineProperty(target, name, { value, enumerable: true });
}

/** Node's `util.inspect.custom`, by its global name: no Node import. */
const INSPECT = Symbol.for('nodejs.util.inspect.custom');

/**
 * Makes `console.log` and Node's `util.inspect` show the instances of `Class` as `name { …view }`,
 * who they are, instead of their fields: by default what its `toJSON` gives `JSON.stringify`, else
 * `view`. The hook is Node's global symbol, set on the prototype: no Node import (browsers ignore
 * it: what keeps credentials from their console is `keep`) and nothing in the declarations.
 *
 * The class's constructor calls it (the first instance sets the hook), not the module beside the
 * class: a call at a module's top level makes every bundler keep the class, and all it uses, in
 * a bundle that imports something else (`verifyWebhook` alone). Neither way around that holds:
 * bundlers keep a class with a static block, and a minifier drops a `#__PURE__` call whose value
 * is unused, the hook with it.
 */
export function showAs<T extends { toJSON(): object }>(Class: { prototype: T }, name: string): void;
export function showAs<T extends object>(
  Class: { prototype: T },
  name: string,
  view: (self: T) => object,
): void;
export function showAs<T extends object>(
  Class: { prototype: T },
  name: string,
  view: (self: T) => object = (self) => (self as T & { toJSON(): object }).toJSON(),
): void {
  if (Object.hasOwn(Class.prototype, INSPECT)) return;
  Object.defineProperty(Class.prototype, INSPECT, {
    value(this: T, depth: number, options: object, inspect?: (value: unknown, options: object) => string) {
      const shown = view(this);
      // Node passes its inspect since 16.14; without it, the plain view is shown.
      return inspect ? `${name} ${inspect(shown, { ...options, depth })}` : shown;
    },
  });
}

/**
 * Where SDK objects keep their credentials (keys, tokens, and the transport, which holds the
 * client's headers): off their own properties, which a browser's console lists however they are
 * marked (showAs speaks to Node's util.inspect only; browsers ignore its hook). A class keeps them
 * with `keep(this, …)` and reads them through getters on its prototype (`held<…>(this)`), which
 * devtools show as `(...)` and run only when clicked. One map for every class, made with a
 * `@__PURE__` annotation, so that a bundler drops it with the last class that uses it.
 */
const heldValues = /* @__PURE__ */ new WeakMap<object, object>();

/** Keeps `values` for `owner`, off its own properties (see heldValues). */
export const keep = (owner: object, values: object): void => {
  heldValues.set(owner, values);
};

/** What `keep` kept for `owner`, as its class types it. */
export const held = <T extends object>(owner: object): T => heldValues.get(owner) as T;

/**
 * A `since` as the server's `timestamp`: a Date as ISO 8601, a string (a cursor, microseconds
 * kept) as it is. What is plainly no date-time is said here, under the name the caller used,
 * rather than by the server under its wire name (`timestamp`).
 */
export function timestampOf(since: string | Date | undefined): string | undefined {
  if (since === undefined || since === null) return undefined;
  if (since instanceof Date) {
    if (Number.isNaN(since.getTime())) throw new ConveneError('since is an invalid Date');
    return since.toISOString();
  }
  // RFC 3339 allows a lower-case `t` (section 5.6).
  if (typeof since !== 'string' || !/^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}/.test(since))
    throw new ConveneError(
      `since must be a Date or a date-time (2030-01-01T12:00:00Z), not ${JSON.stringify(since)}`,
    );
  return since;
}

/** The request options a caller may put among a call's parameters by mistake. */
const REQUEST_OPTIONS = ['signal', 'timeoutMs', 'maxRetries', 'maxRetryAfterMs', 'idempotencyKey'] as const;

/**
 * Refuses what `value` holds of `names` (the first), where it would be ignored: `is` says what it
 * is and where it goes instead.
 */
function refuseMisplaced(
  operation: string,
  value: unknown,
  names: readonly string[],
  is: (found: string) => string,
): void {
  const found = value && typeof value === 'object' ? names.find((name) => name in value) : undefined;
  if (found) throw new ConveneError(`${operation}: \`${found}\` is ${is(found)}, where it would be ignored`);
}

/**
 * Refuses request options given with a call's parameters (`list({ wait, signal })`), where they
 * would be ignored: a plain object compiles there, and a signal meant to end a long poll did not.
 */
export const refuseMisplacedOptions = (operation: string, params: unknown): void =>
  refuseMisplaced(
    operation,
    params,
    REQUEST_OPTIONS,
    (found) => `a request option (the last argument: { ${found} }), not a parameter`,
  );

/**
 * Refuses a call's own parameters given among its request options (`join(link, { name },
 * { wait: false })`), where they would be ignored: a private space's join then waited for approval.
 */
export const refuseMisplacedParams = (operation: string, options: unknown, names: readonly string[]): void =>
  refuseMisplaced(
    operation,
    options,
    names,
    () => 'one of its parameters, not a request option (the last argument)',
  );
