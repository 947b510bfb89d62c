import {
  bookkeepingDbOf,
  type Deps,
  type ReadEventsOptions,
  readContext,
  readEvents,
  type StreamEvent,
  servedEvent,
} from '@convene/core';
import { FanOut, type HubSubscriber } from './fan-out';
import { StreamLeases } from './leases';
import { type StreamCaps, type StreamCapsOptions, streamCaps } from './stream-caps';

export type { HubSubscriber } from './fan-out';
export { contextFrame, type HubEvent, type HubItem, sseFrame } from './frames';

export interface EventHubOptions {
  deps: Deps;
  /** Interval of `: ping` comments on every stream. */
  pingMs: number;
  /** How often the leases of the spaces listened to are renewed, well inside the lease. */
  leaseRenewMs: number;
  /** Open streams per credential and per remote address across every node, and the node's lease. */
  caps: Omit<StreamCapsOptions, 'db' | 'onError'>;
  onError?: (error: unknown, what: string) => void;
}

/**
 * The event side of one process: it hears every node's notices through the EventBus port
 * (`deps.events`), fans them out to this process's streams (fan-out.ts), keeps the stream
 * leases that make the spaces it listens to notified (leases.ts), and counts open streams
 * against their caps across every node (stream-caps.ts). When the bus says notices may have
 * been lost (its connection came back), the leases are renewed at once, which delivers the
 * newest event of every space listened to; streams fill any gap before it from the database.
 */
export class EventHub {
  private readonly fanOut: FanOut;
  private readonly leases: StreamLeases;
  private readonly caps: StreamCaps;
  private readonly inflightReads = new Map<string, Promise<StreamEvent[]>>();
  private stopListening: (() => Promise<void>) | undefined;
  private renewer: NodeJS.Timeout | undefined;
  private pinger: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: EventHubOptions) {
    const onError = (error: unknown, what: string) => options.onError?.(error, what);
    this.fanOut = new FanOut({
      readEvent: async (spaceId, seq) =>
        (await this.read({ spaceId, afterSeq: seq - 1, untilSeq: seq, limit: 1 }))[0],
      // Participants read since where this process has them (ParticipantsCache).
      loadContext: (spaceId) =>
        readContext(options.deps.db, options.deps.clock, options.deps.config, spaceId),
      onError,
    });
    this.leases = new StreamLeases({
      db: options.deps.db,
      listened: () => this.fanOut.listened(),
      onLeased: (spaces) => {
        for (const { spaceId, eventSeq } of spaces) this.fanOut.observe(spaceId, eventSeq);
      },
    });
    // Slots need not wait for the disk: a crash of PostgreSQL ends their streams anyway.
    this.caps = streamCaps({ ...options.caps, db: bookkeepingDbOf(options.deps.db), onError });
  }

  get deps(): Deps {
    return this.options.deps;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** How many subscribers are written to before yielding to I/O (tests lower it). */
  get fanoutSlice(): number {
    return this.fanOut.slice;
  }

  set fanoutSlice(value: number) {
    this.fanOut.slice = value;
  }

  async start(): Promise<void> {
    await this.caps.start();
    this.stopListening = await this.options.deps.events.subscribe({
      notice: (notice) => this.fanOut.notice(servedEvent(this.options.deps.config, notice)),
      committedHere: (notice) => this.fanOut.committed(servedEvent(this.options.deps.config, notice)),
      resync: () => void this.renewLeases(),
    });
    this.pinger = setInterval(() => this.fanOut.tick(), this.options.pingMs);
    this.pinger.unref();
    this.renewer = setInterval(() => void this.renewLeases(), this.options.leaseRenewMs);
    this.renewer.unref();
  }

  /**
   * Resolves once the space's messages are certainly notified to this process: a listener calls
   * it after subscribing and before it reads its starting position (see StreamLeases).
   */
  ready(spaceId: string): Promise<void> {
    return this.leases.ready(spaceId);
  }

  /** Subscribe a stream to a space's live events; returns the unsubscribe function. */
  subscribe(spaceId: string, subscriber: HubSubscriber): () => void {
    return this.fanOut.subscribe(spaceId, subscriber);
  }

  /** Wakes the space's subscribers in `delayMs` (their expiry): one timer per space. */
  wakeAt(spaceId: string, delayMs: number): void {
    this.fanOut.wakeAt(spaceId, delayMs);
  }

  /**
   * Takes a slot for a new stream of `credential` from `address` (both hashed) under the caps,
   * or throws a 429 (TooManyStreamsError); resolves to the function that gives it back.
   */
  admit(credential: string, address: string): Promise<() => void> {
    return this.caps.admit(credential, address);
  }

  /** Streams open on this node. */
  get openStreams(): number {
    return this.caps.open;
  }

  /**
   * Reads a range of events, sharing one query among the streams that ask for the same range at
   * once (many clients reconnecting with the same Last-Event-ID, or filling the same gap).
   */
  read(options: ReadEventsOptions): Promise<StreamEvent[]> {
    const key = JSON.stringify(options);
    let read = this.inflightReads.get(key);
    if (!read) {
      const { db, config } = this.options.deps;
      read = readEvents(db, options)
        .then((events) => events.map((event) => servedEvent(config, event)))
        .finally(() => this.inflightReads.delete(key));
      this.inflightReads.set(key, read);
    }
    return read;
  }

  /**
   * Renews the lease of every space this process still listens to, forgets the others, and
   * delivers what a missed notice left out; runs every `leaseRenewMs`, and when the bus is back.
   */
  renewLeases(): Promise<void> {
    return this.leases.renew().catch((error) => this.options.onError?.(error, 'renewing stream leases'));
  }

  /** End every stream and stop listening (server shutdown). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.pinger) clearInterval(this.pinger);
    if (this.renewer) clearInterval(this.renewer);
    this.fanOut.close();
    await this.caps.close();
    await this.stopListening?.().catch((error) => this.options.onError?.(error, 'unlisten'));
  }
}
