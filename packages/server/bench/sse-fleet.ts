import { Agent, type ClientRequest, get, type IncomingMessage } from 'node:http';

export interface FleetOptions {
  port: number;
  path: string;
  headers: Record<string, string>;
  count: number;
  /** How many connections are being opened at once. */
  concurrency: number;
  /** A client is ready once it has read this marker (the context event, or the bare server's hello). */
  readyMarker: string;
  /** How many messages will be sent (n = 0 … messages - 1). */
  messages: number;
  /**
   * The number of this fleet's first client among all of a target's (its fleets share the
   * target's keys and source addresses, see run.ts's STREAMS_PER_SUBSCRIBER_PROCESS): 0 alone.
   */
  first?: number;
  /**
   * Keys to spread the clients over, `perKey` clients each, sent as X-Private-Key: a server caps
   * the streams of one credential (decisions.md: 20) and of one address (200, see below).
   */
  keys?: { values: string[]; perKey: number };
}

/** Clients per loopback source address (127.0.0.10, .11, …): under the server's cap of 200. */
const PER_ADDRESS = 150;

/**
 * The time every process of this machine reads alike, in ms: CLOCK_MONOTONIC (uv_hrtime), which a
 * step of the wall clock leaves alone. The wall clock (performance.timeOrigin, taken when each
 * process starts, plus its own performance.now()) put a full run's deliveries 18 s late, every one:
 * the clock was stepped between the bench's start and its subscribers'.
 */
export const machineClock = (): number => Number(process.hrtime.bigint()) / 1e6;

interface Client {
  request: ClientRequest;
  response?: IncomingMessage;
  /** What was read of the frame not yet complete, in pieces (joined once its end is in). */
  pending: string[];
  ready: boolean;
  /** Message numbers seen (n), to count losses and duplicates. */
  seen: Uint8Array;
  distinct: number;
  /** The last event id: ids must strictly increase. */
  lastId: number;
  received: number;
  duplicates: number;
  reordered: number;
}

/**
 * N SSE subscribers over keep-alive HTTP/1.1 (loopback only). Each message carries
 * `t=<sender's wall clock in ms>;n=<index>` in its content; each client checks that it sees
 * every n exactly once, with strictly increasing event ids (the server's order), and every
 * delivery's latency is recorded.
 */
export class SseFleet {
  readonly latencies: number[] = [];
  private readonly clients: Client[] = [];
  private readonly agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  errors = 0;

  constructor(private readonly options: FleetOptions) {}

  async connect(timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let next = 0;
    const openOne = (i: number): Promise<void> =>
      new Promise((resolve, reject) => {
        const client: Client = {
          request: undefined as never,
          pending: [],
          ready: false,
          seen: new Uint8Array(this.options.messages),
          distinct: 0,
          lastId: 0,
          received: 0,
          duplicates: 0,
          reordered: 0,
        };
        let settled = false;
        const timer = setTimeout(
          () =>
            settle(
              new Error(
                `subscriber not ready after 30 s (status ${client.response?.statusCode}, read ${JSON.stringify(client.pending.join('').slice(0, 200))})`,
              ),
            ),
          30_000,
        );
        const settle = (error?: Error) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          if (error) reject(error);
          else resolve();
        };
        client.request = get(
          {
            host: '127.0.0.1',
            port: this.options.port,
            path: this.options.path,
            headers: { Accept: 'text/event-stream', ...this.options.headers, ...this.keyHeader(i) },
            localAddress: `127.0.0.${10 + Math.floor(i / PER_ADDRESS)}`,
            agent: this.agent,
          },
          (response) => {
            client.response = response;
            response.on('error', () => {});
            if (response.statusCode !== 200) {
              settle(new Error(`subscriber answered ${response.statusCode}`));
              response.resume();
              return;
            }
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => {
              this.onData(client, chunk);
              if (client.ready) settle();
            });
            response.on('end', () => settle(new Error('stream ended before it was ready')));
          },
        );
        client.request.on('error', (error) => {
          this.errors++;
          settle(error);
        });
        this.clients.push(client);
      });
    const worker = async () => {
      while (next < this.options.count) {
        const i = (this.options.first ?? 0) + next++;
        if (Date.now() > deadline) throw new Error('timed out opening subscribers');
        await openOne(i);
      }
    };
    await Promise.all(Array.from({ length: this.options.concurrency }, worker));
  }

  private keyHeader(i: number): Record<string, string> {
    const keys = this.options.keys;
    if (!keys) return {};
    const key = keys.values[Math.floor(i / keys.perKey)];
    if (!key) throw new Error(`no key for subscriber ${i}: ${keys.values.length} keys × ${keys.perKey}`);
    return { 'X-Private-Key': key };
  }

  private onData(client: Client, chunk: string): void {
    // The machine's clock: the sender, in another process, stamps messages with it too.
    const now = machineClock();
    // A frame's pieces wait until its end is in, then are joined once: linear in what is read, as
    // eventsource-parser (the SDK's) is. Appending each piece and searching from the start took
    // the subscriber process seconds of CPU for 1,000 first contexts of 300 kB.
    const straddles = chunk.startsWith('\n') && client.pending.at(-1)?.endsWith('\n') === true;
    client.pending.push(chunk);
    if (!straddles && !chunk.includes('\n\n')) return;
    let buffer = client.pending.join('');
    client.pending = [];
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (!client.ready && frame.includes(this.options.readyMarker)) client.ready = true;
      const at = frame.indexOf('t=');
      if (at >= 0) {
        const match = /t=([\d.]+);n=(\d+)/.exec(frame.slice(at, at + 64));
        if (match) {
          const n = Number(match[2]);
          const id = Number(/^id: (\d+)/m.exec(frame)?.[1] ?? Number.NaN);
          this.latencies.push(now - Number(match[1]));
          client.received++;
          if (!(id > client.lastId)) client.reordered++;
          client.lastId = id;
          if (client.seen[n]) client.duplicates++;
          else {
            client.seen[n] = 1;
            client.distinct++;
          }
        }
      }
      end = buffer.indexOf('\n\n');
    }
    if (buffer) client.pending.push(buffer);
  }

  /** Waits until every client has seen `count` messages (or the time is up). */
  async waitFor(count: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && this.clients.some((c) => c.distinct < count)) {
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  summary(sent: number) {
    let lost = 0;
    let duplicates = 0;
    let reordered = 0;
    let deliveries = 0;
    for (const c of this.clients) {
      lost += sent - c.distinct;
      duplicates += c.duplicates;
      reordered += c.reordered;
      deliveries += c.received;
    }
    return { subscribers: this.clients.length, deliveries, lost, duplicates, reordered };
  }

  close(): void {
    for (const c of this.clients) {
      c.request.on('error', () => {});
      c.request.destroy();
      c.response?.destroy();
    }
    this.agent.destroy();
  }
}
