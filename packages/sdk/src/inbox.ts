import type { APIPromise } from './api-promise';
import { AbortError, type ConveneError, hasStatus, isTransient } from './errors';
import type { AckInboxResult, GetInboxParams, InboxResult, MessageView } from './generated';
import {
  type LoopEnd,
  type OutageHooks,
  outage,
  type ReconnectOptions,
  reconnectPolicy,
  refusalEnd,
  showAs,
  sleep,
  stoppable,
} from './internal';
import { SpaceResource } from './space-resource';
import type { RequestOptions, Transport } from './transport';

/**
 * The request options of a long poll of `wait` seconds: the server holds its answer that long on
 * purpose, so the wait is added to the attempt's timeout, the call's `timeoutMs` or else the
 * client's.
 */
export function longPollOptions(
  transport: Transport,
  wait: number | undefined,
  options: RequestOptions | undefined,
): RequestOptions | undefined {
  if (!wait) return options;
  return { ...options, timeoutMs: (options?.timeoutMs ?? transport.options.timeoutMs) + wait * 1000 };
}

export interface FollowOptions extends OutageHooks, ReconnectOptions {
  /** How long each long poll waits for something new, in seconds (default 30, at most 60). */
  wait?: number | undefined;
  /** Ends the iteration, without an error (the pending long poll is cancelled). */
  signal?: AbortSignal | undefined;
}

/**
 * What `inbox.follow()` returns: an async generator of your inbox's messages, and why it ended.
 */
export interface InboxFollow extends AsyncGenerator<MessageView, void, undefined> {
  /**
   * Why the loop ended by itself, once it has: your signal aborted (`aborted`), or the server no
   * longer takes the key, `error` being its answer: `kicked` (your participant removed), `left`,
   * `closed` (the space closed or expired), as its code says, else `refused`. Undefined while it runs, and when your loop left it (`break`,
   * an exception) or it threw.
   */
  readonly ended: LoopEnd | undefined;
}

/**
 * Your inbox in one space: the messages that mention you or reply to one of yours, after your
 * read position, which the server keeps. Acknowledge what you have handled (`ack`), and a restart
 * (on any machine) resumes with exactly what was not acknowledged.
 */
export class Inbox extends SpaceResource {
  /** @internal */
  constructor(...args: ConstructorParameters<typeof SpaceResource>) {
    super(...args);
    showAs(Inbox, 'Inbox');
  }

  /**
   * The messages after your read position (or after `after` when further on), oldest first, with
   * unread counts. Reading moves nothing. `wait` (seconds, at most 60) answers as soon as
   * something arrives when nothing is there yet.
   */
  get(params?: GetInboxParams, options?: RequestOptions): APIPromise<InboxResult> {
    return this.call('getInbox', {}, params ?? {}, longPollOptions(this.transport, params?.wait, options));
  }

  /** Moves your read position to `seq` (a MessageView's `seq`); it never moves back. */
  ack(seq: number, options?: RequestOptions): APIPromise<AckInboxResult> {
    return this.call('ackInbox', {}, { seq }, options);
  }

  /**
   * Every message of your inbox, for ever: what was not acknowledged first, then each new one as
   * it arrives (long polls). A message is acknowledged when the loop asks for the next one, so a
   * crash inside the loop's body leaves it to be handled again after a restart; leaving the loop
   * (`break`, an exception) acknowledges nothing more: to leave after handling one, `await
   * inbox.ack(message.seq)` before the `break`. A call that gets no answer or a 5xx (a server
   * restarting) is made again after a backoff of at most 2.5 s (a 408 or 429 after its
   * Retry-After), each failure told to `onDisconnect` as it happens, for up to `maxOutageMs` (ten
   * minutes) or `maxReconnects` attempts in a row, then the last error is thrown (call `follow()`
   * again to resume from the server's read position). The call after a failure does not wait, so
   * that `onReconnect` is told as soon as the server answers. The first read fails as any call
   * does, after the client's retries (`maxRetries`), as a stream's first connection: a wrong URL,
   * a proxy's error page, a server down or silent throw their error.
   *
   * It ends without an error, as a stream does, when the signal aborts and when the server no
   * longer takes the key (the participant removed or gone, the space closed or expired: a 401, 403,
   * 404 or 410, or the 409 of an acknowledgement in a closed space); `ended` then says why. A key
   * refused on the first read (a wrong key) throws.
   *
   *   const following = space.inbox.follow();
   *   for await (const message of following) await handle(message);
   *   if (following.ended?.reason === 'kicked') console.log('removed from the space');
   */
  follow(options?: FollowOptions): InboxFollow {
    const state: { ended?: LoopEnd } = {};
    const generator = stoppable(options?.signal, (stop) => this.following(options ?? {}, stop, state));
    return Object.defineProperty(generator, 'ended', { get: () => state.ended }) as InboxFollow;
  }

  /** `signal`: the caller's, or the iterator's `return()` (see stoppable); only the caller's is `ended`. */
  private async *following(
    options: FollowOptions,
    signal: AbortSignal,
    state: { ended?: LoopEnd },
  ): AsyncGenerator<MessageView, void, undefined> {
    const { wait = 30 } = options;
    const policy = reconnectPolicy(options);
    /** Whether a read has been answered: a key refused after that has ended, not been wrong. */
    let answered = false;
    const contact = outage(options);
    let after: number | undefined;
    let failures = 0;
    /**
     * A call that gets no answer or a 5xx (a server restarting) is made again after a backoff, as
     * a stream reconnects. The first read is not: as a stream's first connection, it fails as any
     * call does, after the client's own retries (a wrong URL, a proxy's 502, a server that never
     * answers say so in seconds, not after the outage allowance).
     */
    const persist = async <T>(call: () => Promise<T>): Promise<T> => {
      for (;;) {
        try {
          const result = await call();
          failures = 0;
          policy.found();
          contact.answered();
          return result;
        } catch (error) {
          // Its own retries, not the client's (maxRetries 0 below): a loss is told (onDisconnect)
          // at its first failure, not after the client's backoff. A 408 or 429 is no loss but a
          // pause the server asks for: waited out (its Retry-After, however long), and not told.
          const paused = hasStatus(error, 408, 429);
          if (!answered || !(paused || isTransient(error))) throw error;
          if (!paused) {
            policy.lost();
            // The first failure is the loss; the ones after it, attempts at getting the server back.
            if (policy.exhausted(failures++)) {
              this.transport.logger.warn(
                `inbox of space ${this.spaceId}: giving up after ${failures} failed calls (limit: ${policy.limits}); follow() again resumes it`,
              );
              throw error;
            }
          }
          const delay = policy.delay((error as ConveneError).headers, failures || 1);
          this.transport.logger.info(
            `inbox of space ${this.spaceId}: ${(error as Error).message}; trying again in ${delay} ms` +
              (paused ? '' : ` (failure ${failures}; giving up after ${policy.limits})`),
          );
          if (!paused) contact.failed(error as ConveneError, delay);
          await sleep(delay, signal);
        }
      }
    };
    /** The first read fails as any call, after the client's retries; the later ones, as persist says. */
    const callOptions = () => (answered ? { signal, maxRetries: 0 } : { signal });
    try {
      for (;;) {
        const page = await persist(() =>
          // After a failure the poll answers at once: a server that is back is told as such
          // (onReconnect) now, not when the next message ends a long wait. So does the first:
          // a key it finds refused is a wrong key, not one that ended while it waited.
          // (An `after` still undefined is left out of the query.)
          this.get({ wait: failures > 0 || !answered ? 0 : wait, after }, callOptions()),
        );
        answered = true;
        for (const message of page.messages) {
          yield message;
          // Asked for the next one: this one is handled.
          await persist(() => this.ack(message.seq, callOptions()));
          after = message.seq;
        }
      }
    } catch (error) {
      // Aborting is how a caller stops following: the loop ends, as a stream's does.
      if (signal.aborted && error instanceof AbortError) {
        if (options.signal?.aborted) state.ended = { reason: 'aborted' };
        return;
      }
      // The key's end (kicked, left, the space closed): the loop ends, as a stream's does.
      if (answered && keyRefused(error)) {
        state.ended = refusalEnd(error);
        return;
      }
      throw error;
    }
  }
}

/**
 * The server's answers that a key no longer works (its participant removed or gone, its space
 * closed or expired), as a stream's reconnection takes them; an acknowledgement in a closed
 * space is refused 409.
 */
const keyRefused = (error: unknown): error is ConveneError => hasStatus(error, 401, 403, 404, 410, 409);
