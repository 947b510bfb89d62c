import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import {
  artifactUri,
  type Database,
  type Deps,
  dropSubscriptions,
  loadSubscriptions,
  MCP_SESSIONS_CHANNEL,
  messagesUri,
  parseMcpSessionNotice,
  resourcesChangedSince,
  type SessionSubscription,
  type StreamEvent,
  sweepMcpSessions,
  touchMcpSession,
} from '@convene/core';
import type { EventHub, HubItem } from '../events/hub';

export interface McpSessionStreamsOptions {
  database: Database;
  deps: Deps;
  hub: EventHub;
  pingMs: number;
  onError?: (error: unknown, what: string) => void;
}

const sessionHash = (sessionId: string): string => createHash('sha256').update(sessionId).digest('hex');

const callKey = (hash: string, requestId: string | number): string => `${hash} ${JSON.stringify(requestId)}`;

/**
 * The GET streams of MCP sessions open on this process (Streamable HTTP's server-to-client
 * channel). A session's subscriptions are rows in the database, made by whichever node served
 * `resources/subscribe`; that node NOTIFYs the session's hash, and the node holding the
 * session's stream reloads them. The stream listens to the subscribed spaces through the event
 * hub (which leases them, so their messages are notified) and sends
 * `notifications/resources/updated` for each change of a subscribed resource.
 */
export class McpSessionStreams {
  private readonly streams = new Map<string, Set<SessionStream>>();
  /** The calls of sessions running on this process, by session hash and request id (callKey). */
  private readonly calls = new Map<string, AbortController>();
  private unlisten: (() => Promise<void>) | undefined;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly options: McpSessionStreamsOptions) {}

  async start(): Promise<void> {
    this.unlisten = await this.options.database.listen(MCP_SESSIONS_CHANNEL, (payload) => {
      const notice = parseMcpSessionNotice(payload);
      if (!notice) return;
      if (notice.kind === 'cancelled') {
        this.calls.get(callKey(notice.hash, notice.requestId))?.abort();
        return;
      }
      const ended = notice.kind === 'ended';
      // A session ended stops its calls still running (a long wait) as well as its streams.
      if (ended) for (const [key, call] of this.calls) if (key.startsWith(`${notice.hash} `)) call.abort();
      for (const stream of [...(this.streams.get(notice.hash) ?? [])]) {
        if (ended) stream.end();
        else stream.reload();
      }
    });
    // Sessions unused for a day are forgotten, by whichever node gets there first.
    this.sweeper = setInterval(
      () =>
        void sweepMcpSessions({ deps: this.options.deps }).catch((error) =>
          this.options.onError?.(error, 'sweeping MCP sessions'),
        ),
      60_000,
    );
    this.sweeper.unref();
  }

  /**
   * A call of the session running here, which its client may cancel (notifications/cancelled,
   * sent to any node: McpSessionStreams of every node hear it). The signal aborts then; `done`
   * forgets the call once it has answered.
   */
  track(sessionId: string, requestId: string | number): { signal: AbortSignal; done: () => void } {
    const key = callKey(sessionHash(sessionId), requestId);
    const controller = new AbortController();
    this.calls.set(key, controller);
    return {
      signal: controller.signal,
      done: () => {
        if (this.calls.get(key) === controller) this.calls.delete(key);
      },
    };
  }

  /**
   * Opens the session's notification stream on `res` (headers already checked and sent by the
   * caller). The stream listens for its session's end before the session is read again: a
   * session ended since the caller's check, whose notice may have come before the stream
   * listened, ends the stream here.
   */
  async open(sessionId: string, res: ServerResponse): Promise<SessionStream> {
    const hash = sessionHash(sessionId);
    const stream = new SessionStream(hash, res, this.options, () => {
      const set = this.streams.get(hash);
      set?.delete(stream);
      if (set?.size === 0) this.streams.delete(hash);
    });
    let set = this.streams.get(hash);
    if (!set) {
      set = new Set();
      this.streams.set(hash, set);
    }
    set.add(stream);
    const live = await touchMcpSession({ deps: this.options.deps, sessionId }).catch((error) => {
      this.options.onError?.(error, 'reading an MCP session');
      return false;
    });
    if (live) stream.reload();
    else stream.end();
    return stream;
  }

  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    for (const set of [...this.streams.values()]) for (const stream of [...set]) stream.end();
    await this.unlisten?.().catch((error) => this.options.onError?.(error, 'unlisten'));
  }
}

interface Watched {
  unsubscribe: () => void;
  /** The subscribed URIs of this space, with who subscribed them. */
  uris: Map<string, SessionSubscription>;
}

/** One open GET stream of a session. */
export class SessionStream {
  private readonly spaces = new Map<string, Watched>();
  private loading: Promise<void> | undefined;
  private reloadAgain = false;
  private ended = false;
  private readonly pinger: NodeJS.Timeout;

  constructor(
    private readonly hash: string,
    private readonly res: ServerResponse,
    private readonly options: McpSessionStreamsOptions,
    private readonly onEnd: () => void,
  ) {
    res.on('close', () => this.end());
    this.pinger = setInterval(() => this.write(': ping\n\n'), options.pingMs);
    this.pinger.unref();
  }

  /** Loads the session's subscriptions again (one reload at a time; changes meanwhile reload once more). */
  reload(): void {
    if (this.ended) return;
    if (this.loading) {
      this.reloadAgain = true;
      return;
    }
    this.loading = this.load()
      .catch((error) => this.options.onError?.(error, 'loading MCP subscriptions'))
      .finally(() => {
        this.loading = undefined;
        if (this.reloadAgain) {
          this.reloadAgain = false;
          this.reload();
        }
      });
  }

  /** Resolves once the current subscriptions are being listened to (tests wait on it). */
  get ready(): Promise<void> {
    return this.loading ?? Promise.resolve();
  }

  private async load(): Promise<void> {
    const subscriptions = await loadSubscriptions({ deps: this.options.deps, sessionHash: this.hash });
    if (this.ended) return;
    const bySpace = new Map<string, Map<string, SessionSubscription>>();
    for (const sub of subscriptions) {
      const uris = bySpace.get(sub.spaceId) ?? new Map<string, SessionSubscription>();
      uris.set(sub.uri, sub);
      bySpace.set(sub.spaceId, uris);
    }
    for (const [spaceId, watched] of this.spaces) {
      if (!bySpace.has(spaceId)) {
        watched.unsubscribe();
        this.spaces.delete(spaceId);
      }
    }
    const started: Promise<void>[] = [];
    for (const [spaceId, uris] of bySpace) {
      const watched = this.spaces.get(spaceId);
      const fresh = [...uris.values()].filter((sub) => !watched?.uris.has(sub.uri));
      if (watched) watched.uris = uris;
      else {
        const unsubscribe = this.options.hub.subscribe(spaceId, {
          deliver: (item) => this.deliver(spaceId, item),
          tick: () => {},
          shutdown: () => this.end(),
        });
        this.spaces.set(spaceId, { unsubscribe, uris });
      }
      if (fresh.length > 0) started.push(this.catchUp(spaceId, fresh));
    }
    await Promise.all(started);
  }

  /**
   * Once the space's events reach this process (its lease held), tells of any change made since
   * a new subscription was made: a change in between would otherwise go unheard.
   */
  private async catchUp(spaceId: string, fresh: SessionSubscription[]): Promise<void> {
    await this.options.hub.ready(spaceId);
    const changed = await resourcesChangedSince({ deps: this.options.deps, spaceId, subscriptions: fresh });
    for (const uri of changed) this.notifyUpdated(uri);
  }

  private notifyUpdated(uri: string): void {
    this.write(
      `event: message\ndata: ${JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/resources/updated',
        params: { uri },
      })}\n\n`,
    );
  }

  private deliver(spaceId: string, item: HubItem): void {
    if (item.type !== 'event') return;
    const watched = this.spaces.get(spaceId);
    if (!watched) return;
    const uri = updatedUri(spaceId, item.event);
    if (uri && watched.uris.has(uri)) this.notifyUpdated(uri);
    if (endsSubscriptions(item.event, watched)) {
      // MCP has no notice that a subscription ended: each resource is said to have changed, and
      // the client's read of it answers why (the space closed, the key no longer works).
      for (const uri of watched.uris.keys()) this.notifyUpdated(uri);
      watched.unsubscribe();
      this.spaces.delete(spaceId);
      dropSubscriptions({ deps: this.options.deps, sessionHash: this.hash, spaceId }).catch((error) =>
        this.options.onError?.(error, 'dropping MCP subscriptions'),
      );
    }
  }

  private write(frame: string): void {
    if (this.ended || this.res.writableEnded) return;
    this.res.write(frame);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.pinger);
    for (const watched of this.spaces.values()) watched.unsubscribe();
    this.spaces.clear();
    if (!this.res.writableEnded) this.res.end();
    this.onEnd();
  }
}

/** The resource an event changes: the transcript on a message, an artifact on a write. */
function updatedUri(spaceId: string, event: StreamEvent): string | undefined {
  if (event.kind === 'message') return messagesUri(spaceId);
  if (event.kind === 'artifact-updated') return artifactUri(spaceId, (event.data as { id: string }).id);
  return undefined;
}

/** A close, or the departure of whoever subscribed, ends the session's subscriptions to the space. */
function endsSubscriptions(event: StreamEvent, watched: Watched): boolean {
  if (event.kind === 'space-closed') return true;
  if (event.kind !== 'participant-status') return false;
  const { participantId, status } = event.data as { participantId: string; status: string };
  if (status !== 'left' && status !== 'kicked') return false;
  return [...watched.uris.values()].some((sub) => sub.participantId === participantId);
}
