import { ShuttingDownError } from '../errors';
import type { StreamEvent } from './read-events';
import type { SpaceWatch } from './space-watch';

export interface LongPollOptions<T> {
  watch: SpaceWatch | undefined;
  spaceId: string;
  /** The longest wait, in seconds; 0 or absent reads once and answers. */
  waitSeconds: number | undefined;
  /** Ends the wait early (the client went away, the server is shutting down). */
  signal?: AbortSignal | undefined;
  /**
   * What a wait cut off by `signal` answers. 'refuse' (the default) throws ShuttingDownError:
   * a read-only wait did nothing, and its client retries. 'last-read' answers the last read, for
   * a caller that wrote before it waited (A2A's blocking message/send, its join): shutting_down
   * says the request was not run, so it would write twice.
   */
  cutOff?: 'refuse' | 'last-read';
  /** The read that answers; it authorises the caller every time. */
  read(): Promise<T>;
  /**
   * How long the space has left, in ms, as the last read found it (undefined: no end). The wait
   * ends then, with a read, which answers as for an expired space (401), not "nothing came".
   */
  msToExpiry?(): number | undefined;
  /** Whether a result is worth answering at once. */
  hasNews(result: T): boolean;
  /** Whether an event may change the answer (another read follows it); the others are ignored. */
  wakesOn(event: StreamEvent): boolean;
  /** Called every `heartbeatMs` while waiting (MCP progress notifications). */
  onHeartbeat?: ((elapsedMs: number) => void) | undefined;
  heartbeatMs?: number;
}

/** How long after a space's expiry a wait cut short by it reads again. */
const EXPIRY_MARGIN_MS = 20;

/**
 * A long poll: reads, and when there is nothing new, waits for an event of the space that may
 * change that and reads again, until there is news or the time is up. It reads the database only
 * when an event says so, never on a timer: an idle wait costs a subscription and nothing else.
 * A caller with news, or refused, is answered by the first read, before anything is subscribed;
 * the second read, made once the subscription holds, closes the window in between.
 */
export async function longPoll<T>(options: LongPollOptions<T>): Promise<T> {
  const { watch, spaceId, waitSeconds, signal, read, hasNews, wakesOn } = options;
  let result = await read();
  if (!watch || !waitSeconds || waitSeconds <= 0 || hasNews(result) || signal?.aborted) return result;

  const started = Date.now();
  const deadline = started + waitSeconds * 1000;
  // A moment past the expiry, so that the read then finds the space expired by the clock it uses.
  const toExpiry = options.msToExpiry?.();
  const expires = toExpiry === undefined ? Number.POSITIVE_INFINITY : started + toExpiry + EXPIRY_MARGIN_MS;
  let pending = false;
  let wake: (() => void) | undefined;
  const unsubscribe = await watch.watch(spaceId, (event) => {
    if (!wakesOn(event)) return;
    pending = true;
    wake?.();
  });
  const onAbort = () => wake?.();
  signal?.addEventListener('abort', onAbort);
  // The first beat says at once that the call is waiting; then one every heartbeatMs.
  options.onHeartbeat?.(0);
  const heartbeat =
    options.onHeartbeat &&
    setInterval(() => options.onHeartbeat?.(Date.now() - started), options.heartbeatMs ?? 5000);
  try {
    pending = false;
    result = await read();
    while (!hasNews(result)) {
      // One reading of the clock for both: read twice, a millisecond ticking between them answered
      // a wait at its space's expiry with the last read ("nothing new", 200) instead of reading again.
      const now = Date.now();
      if (now >= expires) return await read();
      const remaining = Math.min(deadline, expires) - now;
      if (remaining <= 0) return result;
      // Cut off (the server is shutting down; a client gone reads nothing): not 'nothing came',
      // unless the caller already wrote, which answers what it has.
      if (signal?.aborted) {
        if (options.cutOff === 'last-read') return result;
        throw new ShuttingDownError();
      }
      if (!pending) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, remaining);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
      if (pending) {
        pending = false;
        result = await read();
      }
    }
    return result;
  } finally {
    if (heartbeat) clearInterval(heartbeat);
    signal?.removeEventListener('abort', onAbort);
    unsubscribe();
  }
}
