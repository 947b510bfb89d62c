import { randomUUID } from 'node:crypto';
import { Harness } from '../../test/helpers/factories';
import { type Answer, call, SseReader, type StreamedEvent, sleep } from './http';

/** One attempt at a send, with the node it went to. */
export type Attempt = Answer & { node: string };

/** One message a sender means to post once, through however many attempts it takes. */
export interface LogicalSend {
  sender: number;
  content: string;
  idempotencyKey: string;
  attempts: Attempt[];
  /** The id of the acknowledged message (200, first answer or a replay). */
  messageId?: string;
  ackedAt?: number;
  /** The acknowledgement was a replay (Idempotency-Replayed: true). */
  replayed: boolean;
  /** An answer no retry can fix (4xx other than 409/429): the send is abandoned. */
  refused?: Answer;
}

export interface SendLoadOptions {
  /** The nodes' base URLs; each attempt goes to the next one, so a retry tries another node. */
  nodes: readonly string[];
  spaceId: string;
  /** One participant key per concurrent sender. */
  keys: readonly string[];
  /** Message content after the `s<sender>-<n>` that identifies it (padding). */
  padding?: string;
}

/**
 * Concurrent senders, each posting one message after another with its own Idempotency-Key and
 * retrying it (same key, same body) until acknowledged, as the SDK does: at once on another node
 * when no answer came, after Retry-After on a 503 or 429, shortly on a 409 (still running).
 */
export class SendLoad {
  readonly sends: LogicalSend[] = [];
  private stopping = false;
  private running: Promise<void>[] = [];

  constructor(private readonly options: SendLoadOptions) {}

  start(): void {
    this.running = this.options.keys.map((key, sender) => this.sender(sender, key));
  }

  /** Starts no new message; resolves once every message begun is acknowledged or refused. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.running);
  }

  acknowledged(): LogicalSend[] {
    return this.sends.filter((s) => s.messageId !== undefined);
  }

  attempts(): Attempt[] {
    return this.sends.flatMap((s) => s.attempts);
  }

  private async sender(sender: number, key: string): Promise<void> {
    const { nodes, spaceId, padding = '' } = this.options;
    for (let n = 0; !this.stopping; n++) {
      const send: LogicalSend = {
        sender,
        content: `s${sender}-${n}${padding}`,
        idempotencyKey: randomUUID(),
        attempts: [],
        replayed: false,
      };
      this.sends.push(send);
      for (let attempt = 0; ; attempt++) {
        const node = nodes[(sender + n + attempt) % nodes.length]!;
        const answer = await call('POST', `${node}/hub/space/${spaceId}/messages`, {
          key,
          body: { content: send.content },
          headers: { 'Idempotency-Key': send.idempotencyKey },
        });
        send.attempts.push({ ...answer, node });
        if (answer.status === 200) {
          send.messageId = answer.body.messageId;
          send.ackedAt = answer.answeredAt;
          send.replayed = answer.headers.get('idempotency-replayed') === 'true';
          break;
        }
        if (answer.status === 0) await sleep(50);
        else if (answer.status === 503 || answer.status === 429)
          await sleep(Number(answer.headers.get('retry-after') ?? 1) * 1000);
        else if (answer.status === 409) await sleep(200);
        else if (answer.status >= 500) await sleep(500);
        else {
          send.refused = answer;
          break;
        }
      }
    }
  }
}

/**
 * A cursor poller: listMessages from where it left off, every `intervalMs`, keeping every
 * message it is given (a failed poll is tried again at the next tick).
 */
export class Poller {
  readonly messages: any[] = [];
  failures = 0;
  private cursor: string | undefined;
  private stopped = false;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly baseUrl: string,
    private readonly spaceId: string,
    private readonly key: string,
    private readonly intervalMs = 250,
  ) {}

  start(): void {
    this.loop = (async () => {
      while (!this.stopped) {
        await this.poll();
        await sleep(this.intervalMs);
      }
    })();
  }

  /** Polls until a poll comes back empty. */
  async catchUp(): Promise<void> {
    this.stopped = true;
    await this.loop;
    while (await this.poll()) {}
  }

  private async poll(): Promise<boolean> {
    const query = this.cursor ? `?timestamp=${encodeURIComponent(this.cursor)}` : '';
    const page = await call('GET', `${this.baseUrl}/hub/space/${this.spaceId}/messages${query}`, {
      key: this.key,
    });
    if (page.status !== 200) {
      this.failures++;
      return true;
    }
    this.messages.push(...page.body.messages);
    this.cursor = page.body.cursor;
    return page.body.messages.length > 0;
  }
}

/**
 * A stream client as browsers' EventSource and the SDK are: when its stream ends or cannot be
 * opened, it reconnects with Last-Event-ID after `retryMs`.
 */
export class ResumingReader {
  readonly events: StreamedEvent[] = [];
  reconnects = 0;
  private current: SseReader | undefined;
  private taken = 0;
  private stopped = false;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly baseUrl: string,
    private readonly spaceId: string,
    private readonly key: string,
    private readonly retryMs = 500,
  ) {}

  start(): void {
    this.loop = (async () => {
      while (!this.stopped) {
        const lastId = this.events.findLast((e) => e.id !== undefined)?.id;
        try {
          this.current = await SseReader.open(this.baseUrl, this.spaceId, {
            key: this.key,
            lastEventId: lastId,
          });
          this.taken = 0;
          while (!this.current.ended && !this.stopped) {
            this.collect();
            await sleep(20);
          }
          this.collect();
        } catch {}
        if (this.stopped) break;
        this.reconnects++;
        await sleep(this.retryMs);
      }
    })();
  }

  messages(): StreamedEvent[] {
    this.collect();
    return this.events.filter((e) => e.event === 'message');
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.close();
    await this.loop;
  }

  private collect(): void {
    if (!this.current) return;
    const fresh = this.current.events.slice(this.taken);
    this.taken += fresh.length;
    this.events.push(...fresh);
  }
}

export interface Ledger {
  acknowledged: number;
  /** Acknowledged, yet not stored (or stored under another id). */
  lost: number;
  /** Stored more than once (same content). */
  duplicated: number;
  /** Stored, yet never acknowledged. */
  unacknowledged: number;
}

/** Every acknowledged send against what is stored: lost, duplicated, stored unasked. */
export function reconcile(sends: readonly LogicalSend[], stored: readonly any[]): Ledger {
  const byContent = new Map<string, any[]>();
  for (const message of stored) {
    const list = byContent.get(message.content) ?? [];
    list.push(message);
    byContent.set(message.content, list);
  }
  const acked = sends.filter((s) => s.messageId !== undefined);
  const ackedContents = new Set(acked.map((s) => s.content));
  return {
    acknowledged: acked.length,
    lost: acked.filter((s) => {
      const found = byContent.get(s.content);
      return !found?.some((m) => m.id === s.messageId);
    }).length,
    duplicated: [...byContent.values()].reduce((n, list) => n + list.length - 1, 0),
    unacknowledged: [...byContent.keys()].filter((c) => !ackedContents.has(c)).length,
  };
}

/** Whether `seen` is exactly `stored`, once each and in the same order (by message id). */
export function sameSequence(seen: readonly { id: string }[], stored: readonly { id: string }[]): boolean {
  return seen.length === stored.length && seen.every((m, i) => m.id === stored[i]!.id);
}

export interface SendingOptions {
  /** The nodes the senders post through, in turn. */
  nodes: readonly string[];
  /** Where the space is made, its stream read and its messages polled. */
  readerNode: string;
  pollerNode: string;
  senders: number;
  spaceName: string;
}

/**
 * A space with `senders` participants posting through `nodes` (SendLoad), a ResumingReader of
 * its stream and a Poller of its messages, all started.
 */
export async function startSending(options: SendingOptions) {
  const h = new Harness(options.readerNode);
  const space = await h.createSpace({ name: options.spaceName });
  const keys: string[] = [];
  for (let i = 0; i < options.senders; i++)
    keys.push((await h.joinActive(space, { name: `sender ${i}` })).key);
  const reader = new ResumingReader(options.readerNode, space.spaceId, space.ownerKey);
  const poller = new Poller(options.pollerNode, space.spaceId, space.ownerKey);
  reader.start();
  poller.start();
  const load = new SendLoad({ nodes: options.nodes, spaceId: space.spaceId, keys });
  load.start();
  return { space, keys, reader, poller, load };
}
