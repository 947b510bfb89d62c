import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { AbortError, ConnectionError, ConveneError, errorFromResponse, TimeoutError } from './errors';
import { routes, type StreamEvent, type StreamEventName } from './generated';
import {
  backoffMs,
  type DisconnectInfo,
  hidden,
  type LoopEnd,
  linkedController,
  type OutageHooks,
  type ReconnectOptions,
  reconnectDelayMs,
  reconnectPolicy,
  refusalEnd,
  retryableStatus,
  showAs,
  sleep,
  stoppable,
  timestampOf,
} from './internal';

export type { DisconnectInfo, LoopEnd };

import {
  describeNetworkError,
  noAnswer,
  retryDelayMs,
  type Transport,
  withoutCredentials,
} from './transport';

/** How often the server writes a `: ping` on an open stream (decisions.md). */
const SERVER_PING_MS = 15_000;

/** The options of `messages.stream()`; how it gives up on a lost server and its hooks are a loop's. */
export interface StreamOptions extends ReconnectOptions, OutageHooks<ReconnectInfo> {
  /** Replay only the messages after this instant (the backlog); without it, every message. */
  since?: string | Date | undefined;
  /** Resume after this event id (a previous stream's `lastEventId`): every kind of event is replayed. */
  lastEventId?: number | undefined;
  /** Ends the stream: the loop over it finishes without an error. */
  signal?: AbortSignal | undefined;
  /**
   * Silence after which the connection counts as dead and is replaced, in ms (default 45 000: the
   * server sends a `: ping` every 15 s; a value not above that is warned of, as a quiet stream
   * would be replaced at that interval).
   */
  idleTimeoutMs?: number | undefined;
  /** How long to wait for a connection's headers, in ms (default: the client's timeoutMs). */
  timeoutMs?: number | undefined;
}

/**
 * What a stream's `onReconnect` is told. (A `context` event follows every participant or artifact
 * change too, so a context alone does not mean a reconnection.)
 */
export interface ReconnectInfo {
  /** How many attempts the reconnection took (1: the first one succeeded). */
  attempts: number;
  /** The id of the last event delivered before the connection was lost: events resume after it. */
  lastEventId: number | undefined;
}

/**
 * The events this SDK delivers: every name of StreamEventData, which the compiler checks both
 * ways (an array `satisfies StreamEventName[]` let `webhook-disabled` be left out and dropped).
 * A plain object, no call: a bundler drops it with the stream when the stream is not used.
 */
const eventNames: Record<StreamEventName, true> = {
  message: true,
  'participant-status': true,
  context: true,
  'artifact-created': true,
  'artifact-updated': true,
  'artifact-locked': true,
  'artifact-unlocked': true,
  'space-closed': true,
  'webhook-disabled': true,
};

/** Statuses that mean the key or the space is gone for good: reconnecting cannot help. */
const FINAL = new Set([401, 403, 404, 410]);

/** The key and the transport of each MessageStream, off its own properties (see hidden). */
const held = /* @__PURE__ */ hidden<{ transport: Transport; key: string }>();

/**
 * A space's event stream as an async iterable of typed events (`for await (const ev of stream)`).
 * It reconnects by itself after a dropped connection or 45 s of silence, resuming with
 * `Last-Event-ID`, so each event arrives once and in order even across a server restart; it keeps
 * trying, at most 2.5 s apart, for `maxOutageMs` (ten minutes), then throws the last error. It
 * ends after `space-closed`, after its own participant's kick or departure (`participant-status`,
 * when the client knows its participantId), when the signal aborts or the loop breaks, and when a
 * reconnection finds the key no longer valid (kicked, left, closed, expired: 401/403/404/410). An error of the
 * first connection (a wrong key, say, or a server that is down after the client's retries) is thrown.
 */
export class MessageStream implements AsyncIterable<StreamEvent> {
  private lastId: number | undefined;
  /** `since` as the server takes it (timestampOf): checked when the stream is made. */
  private readonly since: string | undefined;
  private started = false;
  private end: LoopEnd | undefined;

  /** @internal */
  constructor(
    transport: Transport,
    private readonly spaceId: string,
    key: string,
    private readonly options: StreamOptions = {},
    /** The key's participant, if known: the stream ends after its own kick or departure. */
    private readonly participantId?: string,
  ) {
    held.keep(this, { transport, key });
    this.lastId = options.lastEventId;
    this.since = timestampOf(options.since);
    showAs(MessageStream, 'MessageStream');
  }

  private get transport(): Transport {
    return held.of(this).transport;
  }

  private get key(): string {
    return held.of(this).key;
  }

  /** The id of the last event delivered: pass it as `lastEventId` to resume later, elsewhere. */
  get lastEventId(): number | undefined {
    return this.lastId;
  }

  /**
   * Why the stream ended by itself, once it has: your signal aborted (`aborted`), the space closed
   * (`closed`, after its `space-closed` event), your participant was removed or left (`kicked`,
   * `left`, after its `participant-status` event), or a reconnection found the key refused: said
   * by the refusal's code (`kicked`, `left`, `closed`), else `refused`, with the server's `error`. Undefined while it runs, and when your loop left it
   * (`break`, an exception) or it threw.
   */
  get ended(): LoopEnd | undefined {
    return this.end;
  }

  /** The space and where the stream is, never the key: what `JSON.stringify` and `console.log` show. */
  toJSON(): { baseUrl: string; spaceId: string; lastEventId: number | undefined } {
    return { ...this.transport.toJSON(), spaceId: this.spaceId, lastEventId: this.lastId };
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamEvent> {
    if (this.started)
      throw new ConveneError('a MessageStream can be iterated once; open another with stream()');
    this.started = true;
    return stoppable(this.options.signal, (stop) => this.events(stop));
  }

  /** `signal`: the caller's, or the iterator's `return()` (see stoppable); only the caller's is `ended`. */
  private async *events(signal: AbortSignal): AsyncGenerator<StreamEvent> {
    const callerAborted = () => this.options.signal?.aborted === true;
    const idleTimeoutMs = this.options.idleTimeoutMs ?? 45_000;
    if (idleTimeoutMs <= SERVER_PING_MS)
      this.transport.logger.warn(
        `stream of space ${this.spaceId}: idleTimeoutMs ${idleTimeoutMs} is not above the server's ` +
          `${SERVER_PING_MS / 1000} s ping, so a quiet stream is replaced every ${idleTimeoutMs} ms; ` +
          'give it more (the default is 45 000)',
      );
    const policy = reconnectPolicy(this.options);
    const pause = (ms: number) =>
      sleep(ms, signal).then(
        () => true,
        () => {
          if (callerAborted()) this.end = { reason: 'aborted' };
          return false;
        },
      );
    const aborted = () => {
      if (callerAborted()) this.end = { reason: 'aborted' };
      return signal.aborted;
    };
    let connectedOnce = false;
    let failures = 0;
    /** Reconnection attempts since the live connection was lost (0 while connected). */
    let attempt = 0;
    const disconnected = (error: ConveneError, delayMs: number) =>
      this.options.onDisconnect?.({ error, attempt: ++attempt, delayMs });

    for (;;) {
      if (aborted()) return;
      const { controller, release } = linkedController(signal);
      const result = await this.connect(controller);
      if (!(result instanceof Response)) {
        release();
        if (aborted()) return;
        const status = result.status;
        if (status !== undefined && FINAL.has(status)) {
          if (!connectedOnce) throw result;
          this.end = refusalEnd(result);
          return;
        }
        const retryable = status === undefined || retryableStatus(status);
        if (!retryable) throw result;
        failures++;
        // A stream that never connected fails like any call, after the client's retries (a
        // server that is down says so in seconds); one that was live keeps trying to come back,
        // for as long as its ReconnectOptions allow, at most RECONNECT_CAP_MS apart.
        const { maxRetries } = this.transport.options;
        if (connectedOnce ? policy.exhausted(failures) : failures > maxRetries) {
          if (connectedOnce) this.gaveUp(failures, policy.limits);
          throw result;
        }
        const backoff = connectedOnce ? reconnectDelayMs : backoffMs;
        const delay = result.headers
          ? retryDelayMs(result.headers, failures - 1, backoff)
          : backoff(failures - 1);
        if (delay === undefined) throw result;
        this.transport.logger.info(
          `space ${this.spaceId}: ${result.message}; ` +
            (connectedOnce
              ? `reconnecting in ${delay} ms (failure ${failures}; giving up after ${policy.limits})`
              : `connecting again in ${delay} ms (retry ${failures} of ${maxRetries})`),
        );
        if (connectedOnce) disconnected(result, delay);
        if (!(await pause(delay))) return;
        continue;
      }
      if (connectedOnce) this.options.onReconnect?.({ attempts: attempt, lastEventId: this.lastId });
      attempt = 0;
      connectedOnce = true;

      const pending: Decoded[] = [];
      const parser = createParser({ onEvent: (message) => pending.push(this.decode(message)) });
      const decoder = new TextDecoder();
      const reader = result.body!.getReader();
      let delivered = false;
      let silent = false;
      let cut: unknown;
      try {
        for (;;) {
          // Silence measures the server, not this reader: the timer runs only while reading.
          const idle = setTimeout(() => {
            silent = true;
            controller.abort();
          }, idleTimeoutMs);
          // A rejected read is a dropped connection, or one replaced after a silence.
          const chunk = await reader.read().then(
            (result) => result,
            (error: unknown) => {
              cut = error;
              return undefined;
            },
          );
          clearTimeout(idle);
          if (!chunk || chunk.done) break;
          parser.feed(decoder.decode(chunk.value, { stream: true }));
          while (pending.length > 0) {
            const { id, event } = pending.shift()!;
            if (id !== undefined) {
              // A replay that overlaps what was delivered is dropped: each event once.
              if (this.lastId !== undefined && id <= this.lastId) continue;
              this.lastId = id;
            }
            // A snapshot says where the stream stands: a reconnection before any event with an id
            // resumes there, not after the last replayed message (a `since` replay holds messages
            // only, and the other events between them and the start are not this stream's).
            if (
              event?.event === 'context' &&
              !(this.lastId !== undefined && event.data.lastEventId <= this.lastId)
            )
              this.lastId = event.data.lastEventId;
            if (!event) continue;
            delivered = true;
            yield event;
            if (event.event === 'space-closed') {
              this.end = { reason: 'closed' };
              return;
            }
            if (this.isOwnEnd(event)) {
              this.end = { reason: event.data.status === 'kicked' ? 'kicked' : 'left' };
              return;
            }
          }
        }
      } finally {
        controller.abort();
        release();
        reader.cancel().catch(() => {});
      }
      if (aborted()) return;
      // A connection that ends before delivering anything counts as a failed attempt; one that
      // delivered was the server back, and the outage (if it is one) starts now.
      if (delivered) {
        failures = 0;
        policy.found();
      } else failures++;
      policy.lost();
      if (policy.exhausted(failures)) {
        this.gaveUp(failures, policy.limits);
        throw new ConnectionError(
          failures === 0
            ? 'the stream ended, and maxReconnects 0 allows no attempt to reconnect'
            : 'the stream keeps closing before any event',
        );
      }
      const lost = silent
        ? new TimeoutError(`the stream was silent for ${idleTimeoutMs} ms, so it is replaced`)
        : cut === undefined
          ? new ConnectionError('the server ended the stream')
          : new ConnectionError(`the stream was cut: ${describeNetworkError(cut)}`, { cause: cut });
      this.transport.logger.info(
        `stream of space ${this.spaceId}: ${lost.message}; resuming after event ${this.lastId ?? '(none)'}`,
      );
      // A short jittered pause, so that the clients of a restarted server spread out.
      const delay = reconnectDelayMs(failures);
      disconnected(lost, delay);
      if (!(await pause(delay))) return;
    }
  }

  /** Said at the default level: a loop that gave up is a loop that must be restarted. */
  private gaveUp(failures: number, limits: string): void {
    this.transport.logger.warn(
      `stream of space ${this.spaceId}: giving up after ${failures} failed attempts to reconnect ` +
        `(limit: ${limits}); resume it with stream({ lastEventId: ${this.lastId ?? 'undefined'} })`,
    );
  }

  /**
   * The key's own participant kicked or gone: the server ends the stream right after this event,
   * and its key is dead, so it ends here rather than being taken for a lost connection. (A client
   * that was not told its participantId learns it from the refused reconnection instead.)
   */
  private isOwnEnd(event: StreamEvent): event is Extract<StreamEvent, { event: 'participant-status' }> {
    return (
      event.event === 'participant-status' &&
      this.participantId !== undefined &&
      event.data.participantId === this.participantId &&
      (event.data.status === 'kicked' || event.data.status === 'left')
    );
  }

  /** One connection attempt: the streaming Response, or the error it met. */
  private async connect(controller: AbortController): Promise<Response | ConveneError> {
    const { transport, options } = this;
    const resuming = this.lastId !== undefined;
    const url = transport.url(
      routes.streamMessages,
      { spaceId: this.spaceId },
      resuming ? {} : { timestamp: this.since },
    );
    const headers = transport.headers({ spaceKey: this.key }, { Accept: 'text/event-stream' });
    if (resuming) headers.set('Last-Event-ID', String(this.lastId));
    const timeoutMs = options.timeoutMs ?? transport.options.timeoutMs;
    const what = `GET ${withoutCredentials(url)}`;
    const started = Date.now();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    try {
      const response = await transport.options.fetch(url, { headers, signal: controller.signal });
      transport.traced('streamMessages', what, started, response);
      if (response.ok && response.body) return response;
      const text = await response.text();
      return errorFromResponse(response.status, response.headers, text);
    } catch (error) {
      const why = options.signal?.aborted
        ? 'aborted'
        : timedOut
          ? `no answer within ${timeoutMs} ms`
          : describeNetworkError(error);
      transport.traced('streamMessages', what, started, why);
      if (options.signal?.aborted) return new AbortError('aborted', { cause: error });
      // Named as any request that got no answer is (transport.ts): its operation and URL.
      const request = noAnswer(error, 'streamMessages', 'GET', url);
      const named = `(streamMessages: ${what})`;
      return timedOut
        ? new TimeoutError(`the stream got no answer within ${timeoutMs} ms ${named}`, request)
        : new ConnectionError(`the stream could not connect: ${why} ${named}`, request);
    } finally {
      clearTimeout(timer);
    }
  }

  private decode(message: EventSourceMessage): Decoded {
    const name = message.event ?? 'message';
    const parsedId = message.id ? Number(message.id) : Number.NaN;
    const id = Number.isFinite(parsedId) ? parsedId : undefined;
    // An event kind this SDK does not know yet (the API may add some) is skipped; its id counts.
    if (!Object.hasOwn(eventNames, name)) return { id, event: undefined };
    let data: unknown;
    try {
      data = JSON.parse(message.data);
    } catch {
      this.transport.logger.warn(
        `stream of space ${this.spaceId}: a '${name}' event that is not JSON was skipped`,
      );
      return { id, event: undefined };
    }
    if (name === 'context')
      return { id: undefined, event: { event: 'context', id: undefined, data } as StreamEvent };
    return { id, event: { event: name, id, data } as StreamEvent };
  }
}

/** One parsed SSE event: its id (if any) and the typed event, unless its kind is unknown. */
interface Decoded {
  id: number | undefined;
  event: StreamEvent | undefined;
}
