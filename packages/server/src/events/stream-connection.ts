import type { ServerResponse } from 'node:http';
import type { TParticipantView } from '@convene/contract';
import type { Clock, StreamEvent, StreamStart } from '@convene/core';
import type { HubSubscriber } from './fan-out';
import { CHUNK_END, chunkHead, chunkOf, contextFrameParts, type HubItem, sseFrame } from './frames';
import type { EventHub } from './hub';

const BACKLOG_PAGE = 500;
const PING = Buffer.from(': ping\n\n');
/** setTimeout's ceiling; later expiries are re-armed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface StreamConnectionOptions {
  hub: EventHub;
  res: ServerResponse;
  spaceId: string;
  clock: Clock;
  /** Last-Event-ID: replay every kind of event after it (takes precedence over timestamp). */
  lastEventId: number | undefined;
  /** Replay the messages after this instant; neither: every message of the space. */
  timestamp: string | undefined;
  /**
   * A client with this much output queued and unread is cut off (it resumes with Last-Event-ID):
   * a stalled reader holds at most this much of the server's memory, and never slows the others.
   */
  maxQueuedBytes: number;
  /**
   * An open stream keeps its participant seen: the key is held (written every `presenceHeldMs`)
   * from the stream's start to its end. Fields rather than a callback: a closure per stream held for
   * hours costs 300 bytes.
   */
  presence?: { keeper: PresenceKeeper; key: string } | undefined;
  /** Where the stream's failures are logged (its request's logger). */
  log?: StreamLog | undefined;
}

/** Keeps a key's participant seen while a connection of theirs is open (Presence). */
export interface PresenceKeeper {
  hold(key: string): void;
  release(key: string): void;
}

export interface StreamLog {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/**
 * One SSE client. It subscribes to the hub before the caller authorises and takes its starting
 * position, replays the backlog up to that position, sends a context snapshot, then goes live:
 * events already sent are dropped by sequence number, and a gap (a notice lost while the
 * listener reconnected) is filled from the database, so each event is written exactly once and
 * in order.
 */
export class StreamConnection implements HubSubscriber {
  /** The event id of the last event written (or covered by the backlog). */
  private lastSent = 0;
  private lastContextSeq = 0;
  /** Items that arrived while the backlog or a gap was being written, and their size. */
  private queue: HubItem[] = [];
  private queuedBytes = 0;
  private busy = true;
  /** Nothing is written before the stream is authorised and its headers are out. */
  private started = false;
  private ended = false;
  /** Whether the stream holds its key's presence (from its start to its end). */
  private holding = false;
  private expirePending = false;
  private participantId = '';
  private expiresAt = Number.POSITIVE_INFINITY;
  private readonly unsubscribe: () => void;

  constructor(private readonly options: StreamConnectionOptions) {
    this.unsubscribe = options.hub.subscribe(options.spaceId, this);
    options.res.on('close', () => this.end());
  }

  /** The stream was refused before it started (its error answered as JSON). */
  abandon(): void {
    this.ended = true;
    this.detach();
  }

  /** Replays the backlog up to `start.eventSeq`, sends the context, then delivers live events. */
  async begin(start: StreamStart): Promise<void> {
    const { hub, spaceId, lastEventId, timestamp } = this.options;
    if (this.ended) return;
    this.started = true;
    const { presence } = this.options;
    if (presence) {
      presence.keeper.hold(presence.key);
      this.holding = true;
    }
    this.participantId = start.participantId;
    this.expiresAt = start.expiresAt.getTime();
    this.armExpiry();
    try {
      let after = lastEventId ?? 0;
      for (;;) {
        const page = await hub.read({
          spaceId,
          afterSeq: after,
          untilSeq: start.eventSeq,
          ...(lastEventId === undefined ? { messagesOnly: { after: timestamp } } : {}),
          limit: BACKLOG_PAGE,
        });
        for (const event of page) {
          if (!this.writeEvent(event)) return;
          after = event.seq;
          if (this.needsDrain) await this.drained();
        }
        if (page.length < BACKLOG_PAGE || this.ended) break;
      }
      if (this.ended) return;
      this.lastSent = Math.max(this.lastSent, start.eventSeq);
      // The context of the starting snapshot; later changes each bring a fresher one.
      this.write(...contextFrameParts({ ...start.context, lastEventId: start.eventSeq }));
      this.lastContextSeq = start.eventSeq;
      await this.drainQueue();
    } catch (error) {
      this.failed(error);
      this.end();
    }
  }

  deliver(item: HubItem): void {
    if (this.ended) return;
    if (this.busy) {
      this.queuedBytes += itemBytes(item);
      if (this.queuedBytes + this.options.res.writableLength >= this.options.maxQueuedBytes) {
        this.cutOff();
        return;
      }
      this.queue.push(item);
      return;
    }
    const gap = this.handle(item);
    if (gap) {
      this.busy = true;
      gap.then(
        () => this.drainQueue(),
        (error) => {
          this.failed(error);
          this.end();
        },
      );
    }
  }

  tick(): void {
    if (this.ended || !this.started) return;
    this.write(PING);
    if (this.options.clock.now().getTime() >= this.expiresAt) this.expire();
  }

  wake(): void {
    if (this.ended || !this.started) return;
    this.armExpiry();
  }

  shutdown(): void {
    this.end();
  }

  /** Writes a live item; returns a promise when a gap must first be filled from the database. */
  private handle(item: HubItem): Promise<void> | undefined {
    if (item.type === 'context') {
      if (item.afterSeq > this.lastContextSeq) {
        this.lastContextSeq = item.afterSeq;
        this.write(item.frame);
      }
      return undefined;
    }
    const { event } = item;
    if (event.seq <= this.lastSent) return undefined; // already sent (backlog or duplicate)
    if (event.seq === this.lastSent + 1) {
      this.writeEvent(event, event.frame);
      return undefined;
    }
    return this.fillGap(event.seq - 1).then(() => {
      if (!this.ended) this.writeEvent(event, event.frame);
    });
  }

  private async fillGap(untilSeq: number): Promise<void> {
    const { hub, spaceId } = this.options;
    while (this.lastSent < untilSeq && !this.ended) {
      const page = await hub.read({ spaceId, afterSeq: this.lastSent, untilSeq, limit: BACKLOG_PAGE });
      for (const event of page) if (!this.writeEvent(event)) return;
      // Sequence numbers are dense, but never wait forever for one that is not there.
      if (page.length < BACKLOG_PAGE) this.lastSent = untilSeq;
    }
  }

  private async drainQueue(): Promise<void> {
    try {
      while (this.queue.length > 0 && !this.ended) {
        const item = this.queue.shift()!;
        this.queuedBytes -= itemBytes(item);
        const gap = this.handle(item);
        if (gap) await gap;
      }
    } catch (error) {
      this.failed(error);
      this.end();
      return;
    }
    this.busy = false;
    if (this.expirePending) this.expire();
  }

  /** Writes one event; false once the stream has ended (closed space, or the listener left). */
  private writeEvent(event: StreamEvent, frame?: Buffer): boolean {
    if (this.ended) return false;
    const shared = event as StreamEvent & { frame?: Buffer };
    // Replayed pages are shared between streams reading the same range: serialise once.
    shared.frame ??= frame ?? sseFrame(event);
    this.write(shared.frame);
    this.lastSent = event.seq;
    if (event.kind === 'space-closed' || this.isOwnDeparture(event)) {
      this.end();
      return false;
    }
    return true;
  }

  private isOwnDeparture(event: StreamEvent): boolean {
    if (event.kind !== 'participant-status') return false;
    const view = event.data as Partial<TParticipantView>;
    return view.participantId === this.participantId && (view.status === 'kicked' || view.status === 'left');
  }

  /**
   * Writes one frame (in parts: a context's participants are pieces shared between streams, see
   * frames.ts) straight to the socket, the headers being out: as the chunk of a chunked body that
   * every stream shares (chunkOf), or as it is where the body is not chunked (an HTTP/1.0
   * client's, delimited by the connection's close). `res.write` would frame it again for each
   * stream, in four writes of the socket corked until the next tick (bench, 1,000 and 5,000
   * streams: the server's CPU per delivery 16.1 -> 12.9 and 13.2 -> 8.7 µs).
   */
  private write(...frame: Buffer[]): void {
    const { res } = this.options;
    if (this.ended || !this.started || res.destroyed) return;
    // A client that left this much unread resumes with Last-Event-ID instead of holding the
    // server's memory. Checked once before the frame, so one large frame alone never trips it,
    // and a frame is never cut between its parts.
    if (res.writableLength >= this.options.maxQueuedBytes) {
      this.cutOff();
      return;
    }
    const socket = res.socket;
    if (!socket) {
      // Not yet given its connection (a request pipelined behind another on the same one):
      // the response keeps what is written until the one before it ends.
      for (const part of frame) res.write(part);
      return;
    }
    if (socket.destroyed) return;
    if (frame.length === 1) {
      socket.write(res.chunkedEncoding ? chunkOf(frame[0]!) : frame[0]!);
      return;
    }
    // The parts go out in one write of the socket rather than one each.
    socket.cork();
    try {
      if (res.chunkedEncoding) socket.write(chunkHead(frame.reduce((size, part) => size + part.length, 0)));
      for (const part of frame) socket.write(part);
      if (res.chunkedEncoding) socket.write(CHUNK_END);
    } finally {
      socket.uncork();
    }
  }

  /** Ends a stream whose client stopped reading, dropping what it has not read. */
  private cutOff(): void {
    if (this.ended) return;
    // Nothing more is written to it from here; end() would wait for the unread output to drain,
    // which a stalled client never lets happen, so the socket is reset instead (reap).
    this.ended = true;
    this.detach();
    // Told apart from a client that left: an operator sees which streams read too slowly.
    this.options.log?.warn(
      {
        spaceId: this.options.spaceId,
        unreadBytes: this.options.res.writableLength + this.queuedBytes,
        lastEventId: this.lastSent,
      },
      'stream cut off: its client left too much unread (it may resume with Last-Event-ID)',
    );
    reap(this.options.res);
  }

  /** Whether what is written waits for the client to read (see write: the socket, or the response itself). */
  private get needsDrain(): boolean {
    const { res } = this.options;
    return res.socket ? res.socket.writableNeedDrain : res.writableNeedDrain;
  }

  private drained(): Promise<void> {
    const { res } = this.options;
    if (!this.needsDrain || this.ended) return Promise.resolve();
    const writer = res.socket ?? res;
    return new Promise((resolve) => {
      const done = () => {
        writer.off('drain', done);
        res.off('close', done);
        resolve();
      };
      writer.on('drain', done);
      res.on('close', done);
    });
  }

  private armExpiry(): void {
    if (this.ended) return;
    const delay = this.expiresAt - this.options.clock.now().getTime();
    if (delay <= 0) {
      this.expire();
      return;
    }
    // The space's streams share one timer (the hub's); a wake-up before the expiry asks again.
    this.options.hub.wakeAt(this.options.spaceId, Math.min(delay, MAX_TIMER_MS));
  }

  /** The TTL elapsed: the space behaves as closed, announced like a close, then the stream ends. */
  private expire(): void {
    if (this.ended) return;
    if (this.busy) {
      this.expirePending = true;
      return;
    }
    const data = { spaceId: this.options.spaceId, reason: 'expired' };
    // Nothing can be appended to an expired space, so the next event id names this one.
    this.writeEvent({ seq: this.lastSent + 1, kind: 'space-closed', data });
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.detach();
    const { res } = this.options;
    if (this.started && !res.destroyed && !res.writableEnded) res.end();
  }

  /** The stream is over: no more events, and its participant no longer kept seen by it. */
  private detach(): void {
    this.unsubscribe();
    if (this.holding && this.options.presence) {
      this.holding = false;
      this.options.presence.keeper.release(this.options.presence.key);
    }
  }

  private failed(error: unknown): void {
    this.options.log?.error({ err: error }, 'event stream failed');
  }

  /** The client went away, was cut off, or the server is closing, before or during the stream. */
  get isEnded(): boolean {
    return this.ended;
  }
}

/**
 * Responses of cut-off streams waiting for their reset, done a few per turn of the event loop.
 * A reset rather than a close: a closed socket would stay behind, orphaned, holding its unsent
 * output (up to the kernel's send buffer, megabytes on loopback) for minutes while the kernel
 * probes a client that never reads; a reset frees it at once. A few at a time: clients that
 * stalled together are cut together, and resetting 500 sockets with megabytes queued each (and
 * failing their pending writes) in one go held the event loop for a second, ten a turn for 30 ms each (fault
 * test: readers' p99 latency 1.0 s, then 0.27 s, 30-70 ms without them).
 */
const doomed: ServerResponse[] = [];
const RESETS_PER_TURN = 2;

function reap(res: ServerResponse): void {
  doomed.push(res);
  if (doomed.length === 1) setImmediate(reapSome);
}

function reapSome(): void {
  for (const res of doomed.splice(0, RESETS_PER_TURN)) {
    if (res.socket && !res.socket.destroyed) res.socket.resetAndDestroy();
    else res.destroy();
  }
  if (doomed.length > 0) setImmediate(reapSome);
}

const itemBytes = (item: HubItem): number => (item.type === 'event' ? item.event.frame : item.frame).length;
