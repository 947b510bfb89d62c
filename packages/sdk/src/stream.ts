import { createParser, type EventSourceMessage } from 'eventsource-parser';
import {
  AbortError,
  ConnectionError,
  ConveneError,
  errorFromResponse,
  hasStatus,
  TimeoutError,
} from './errors';
import type { StreamEvent, StreamEventName } from './generated';
import {
  type DisconnectInfo,
  type LoopEnd,
  type OutageHooks,
  outage,
  type ReconnectOptions,
  reconnectDelayMs,
  reconnectPolicy,
  refusalEnd,
  retryableStatus,
  showAs,
  sleep,
  stoppable,
  timerMs,
  timestampOf,
} from './internal';

export type { DisconnectInfo, LoopEnd };

import { SpaceResource } from './space-resource';
import { describeNetworkError, type Transport } from './transport';

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
export class MessageStream extends SpaceResource implements AsyncIterable<StreamEvent> {
  declare private lastId: number | undefined;
  /** `since` as the server takes it (timestampOf): checked when the stream is made. */
  declare private readonly since: string | undefined;
  declare private started: boolean | undefined;
  declare private end: LoopEnd | undefined;

  /** @internal */
  constructor(
    transport: Transport,
    spaceId: string,
    key: string,
    /** The key's participant, if known: the stream ends after its own kick or departure. */
    participantId: string | undefined,
    private readonly options: StreamOptions = {},
  ) {
    super(transport, spaceId, key, participantId);
    this.lastId = options.lastEventId;
    this.since = timestampOf(options.since);
    showAs(MessageStream, 'MessageStream');
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
  override toJSON(): { baseUrl: string; spaceId: string; lastEventId: number | undefined } {
    return { ...this.transport.toJSON(), spaceId: this.spaceId, lastEventId: this.lastId };
  }

  /**
   * Its events, once: a second `for await` over the same stream throws (a ConveneError). To
   * follow the space again, call `messages.stream({ lastEventId: stream.lastEventId })`.
   */
  [Symbol.asyncIterator](): AsyncIterator<StreamEvent> {
    if (this.started) throw new ConveneError('a MessageStream is iterated once');
    this.started = true;
    return stoppable(this.options.signal, (stop) => this.events(stop));
  }

  /** `signal`: the caller's, or the iterator's `return()` (see stoppable); only the caller's is `ended`. */
  private async *events(signal: AbortSignal): AsyncGenerator<StreamEvent> {
    const { options, transport } = this;
    const idleTimeoutMs = options.idleTimeoutMs ?? 45_000;
    // The server writes a `: ping` on an open stream every 15 s (decisions.md).
    if (idleTimeoutMs <= 15_000)
      transport.logger.warn(
        `stream of space ${this.spaceId}: idleTimeoutMs ${idleTimeoutMs} is not above the server's 15 s ping`,
      );
    const policy = reconnectPolicy(options);
    // Each attempt at getting a live connection back, and the connection back, told to the hooks.
    const contact = outage(options);
    /** Whether the loop is over: `ended` says so when it is the caller's signal. */
    const aborted = () => {
      if (options.signal?.aborted) this.end = { reason: 'aborted' };
      return signal.aborted;
    };
    /** Said at the default level: a loop that gave up is a loop that must be restarted. */
    const gaveUp = () =>
      transport.logger.warn(
        `stream of space ${this.spaceId}: giving up after ${failures} failed reconnects (limit: ${policy.limits}); stream({ lastEventId: ${this.lastId} }) resumes it`,
      );
    /** A pause that an abort cuts short: the loop then ends at its next aborted(). */
    const pause = (ms: number) => sleep(ms, signal).catch(() => {});
    let connectedOnce = false;
    let failures = 0;

    for (;;) {
      if (aborted()) return;
      // A stream that never connected fails like any call, after the client's retries (a server
      // that is down says so in seconds); one that was live keeps trying to come back, for as
      // long as its ReconnectOptions allow, at most 2.5 s apart (reconnectDelayMs).
      const result = await this.connect(signal, connectedOnce);
      if (result instanceof ConveneError) {
        if (aborted()) return;
        if (!connectedOnce) throw result;
        // The key or the space gone for good: reconnecting cannot help.
        if (hasStatus(result, 401, 403, 404, 410)) {
          this.end = refusalEnd(result);
          return;
        }
        const status = result.status;
        // A 200 is an answer that was no event stream (a proxy's page while the server is away).
        if (!(status === undefined || status === 200 || retryableStatus(status))) throw result;
        failures++;
        if (policy.exhausted(failures)) {
          gaveUp();
          throw result;
        }
        const delay = policy.delay(result.headers, failures);
        transport.logger.info(
          `space ${this.spaceId}: ${result.message}; ` +
            `reconnecting in ${delay} ms (failure ${failures}; giving up after ${policy.limits})`,
        );
        contact.failed(result, delay);
        await pause(delay);
        continue;
      }
      contact.answered({ lastEventId: this.lastId });
      connectedOnce = true;

      const pending: Decoded[] = [];
      const parser = createParser({ onEvent: (message) => pending.push(this.decode(message)) });
      const decoder = new TextDecoder();
      const reader = result.body!.getReader();
      // A read may wait long: a silence, the caller's signal and the iterator's return() end it at
      // once (a cancelled read is done), as does the end of the connection.
      const cancel = () => {
        reader.cancel().catch(() => {});
      };
      signal.addEventListener('abort', cancel, { once: true });
      if (signal.aborted) cancel();
      let delivered = false;
      let silent = false;
      let cut: unknown;
      try {
        for (;;) {
          // Silence measures the server, not this reader: the timer runs only while reading.
          const idle = setTimeout(() => {
            silent = true;
            cancel();
          }, timerMs(idleTimeoutMs));
          // A rejected read is a dropped connection, or one replaced after a silence.
          const chunk = await reader.read().catch((error: unknown) => {
            cut = error;
          });
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
            if (!event) continue;
            // A snapshot says where the stream stands: a reconnection before any event with an id
            // resumes there, not after the last replayed message (a `since` replay holds messages
            // only, and the other events between them and the start are not this stream's).
            if (
              event.event === 'context' &&
              !(this.lastId !== undefined && event.data.lastEventId <= this.lastId)
            )
              this.lastId = event.data.lastEventId;
            delivered = true;
            yield event;
            if (event.event === 'space-closed') {
              this.end = { reason: 'closed' };
              return;
            }
            // The key's own participant kicked or gone: the server ends the stream right after this
            // event, and its key is dead, so it ends here rather than being taken for a lost
            // connection. (A client that was not told its participantId learns it from the
            // refused reconnection instead.)
            if (
              event.event === 'participant-status' &&
              event.data.participantId === this.participantId &&
              (event.data.status === 'kicked' || event.data.status === 'left')
            ) {
              this.end = { reason: event.data.status };
              return;
            }
          }
        }
      } finally {
        signal.removeEventListener('abort', cancel);
        cancel();
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
        gaveUp();
        throw new ConnectionError(
          failures === 0 ? 'the stream ended (maxReconnects 0)' : 'the stream closes before any event',
        );
      }
      const lost = silent
        ? new TimeoutError(`the stream was silent for ${idleTimeoutMs} ms`)
        : cut === undefined
          ? new ConnectionError('the server ended the stream')
          : new ConnectionError(`the stream was cut: ${describeNetworkError(cut)}`, { cause: cut });
      transport.logger.info(
        `stream of space ${this.spaceId}: ${lost.message}; resuming after event ${this.lastId ?? '(none)'}`,
      );
      // A short jittered pause, so that the clients of a restarted server spread out.
      const delay = reconnectDelayMs(failures);
      contact.failed(lost, delay);
      await pause(delay);
    }
  }

  /**
   * Connects: the streaming Response, or the error met, named as any call's, as the stream's.
   * The first connection is retried as any call is; a reconnection is a single attempt, which the
   * stream makes again as its ReconnectOptions say. `signal` ends it.
   */
  private async connect(signal: AbortSignal, reconnecting: boolean): Promise<Response | ConveneError> {
    const resuming = this.lastId !== undefined;
    try {
      const { response } = await this.call('streamMessages', {}, resuming ? {} : { timestamp: this.since }, {
        signal,
        timeoutMs: this.options.timeoutMs,
        maxRetries: reconnecting ? 0 : undefined,
        headers: {
          Accept: 'text/event-stream',
          ...(resuming ? { 'Last-Event-ID': String(this.lastId) } : {}),
        },
      }).withResponse();
      return response.body ? response : errorFromResponse(response.status, response.headers, '');
    } catch (error) {
      // Named as the stream's, with the error's details and its `cause` (the constructor reads
      // the error it is given, rather than copying it).
      if (error instanceof TimeoutError) return new TimeoutError(`the stream got ${error.message}`, error);
      if (error instanceof ConnectionError)
        return new ConnectionError(`the stream could not connect: ${error.message}`, error);
      // Ended by `signal`, or refused: the loop looks at it. Anything else is thrown.
      if (error instanceof AbortError || (error as ConveneError).status !== undefined)
        return error as ConveneError;
      throw error;
    }
  }

  private decode(message: EventSourceMessage): Decoded {
    const name = message.event ?? 'message';
    // An id that is no number (none: '' would be 0) is no id.
    const parsedId = Number(message.id || Number.NaN);
    const id = Number.isFinite(parsedId) ? parsedId : undefined;
    // An event kind this SDK does not know yet (the API may add some) is skipped; its id counts.
    if (!Object.hasOwn(eventNames, name)) return { id, event: undefined };
    let data: unknown;
    try {
      data = JSON.parse(message.data);
    } catch {
      this.transport.logger.warn(`stream of space ${this.spaceId}: skipped a '${name}' event: not JSON`);
      return { id, event: undefined };
    }
    // A `context` has no id of its own: where the stream stands is its data's `lastEventId`.
    const eventId = name === 'context' ? undefined : id;
    return { id: eventId, event: { event: name, id: eventId, data } as StreamEvent };
  }
}

/** One parsed SSE event: its id (if any) and the typed event, unless its kind is unknown. */
interface Decoded {
  id: number | undefined;
  event: StreamEvent | undefined;
}
