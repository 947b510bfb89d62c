/** One event read from a Server-Sent Events stream. */
export interface SseEvent {
  id: string | undefined;
  event: string;
  data: string;
  /** `data` parsed as JSON. */
  json: any;
}

export interface OpenStreamOptions {
  /** Sent as X-Private-Key. */
  key?: string;
  /** Sent as `?key=` instead. */
  queryKey?: string;
  timestamp?: string;
  lastEventId?: string;
  headers?: Record<string, string>;
}

/**
 * A small SSE reader over fetch, so tests see exactly what went over the wire: status and
 * headers, every event with its id, comments (pings), and the end of the stream.
 */
export class SseStream {
  readonly events: SseEvent[] = [];
  readonly comments: string[] = [];
  ended = false;
  /** Resolves when the server ends the stream (or it is aborted). */
  readonly done: Promise<void>;
  private cursor = 0;
  private waiters: (() => void)[] = [];

  private constructor(
    readonly status: number,
    readonly headers: Headers,
    private readonly controller: AbortController,
    body: ReadableStream<Uint8Array>,
  ) {
    this.done = this.pump(body);
  }

  /** Opens a stream; when the answer is not 200 returns its status, headers and JSON body instead. */
  static async open(
    baseUrl: string,
    spaceId: string,
    options: OpenStreamOptions = {},
  ): Promise<SseStream | { status: number; headers: Headers; body: any; text: string }> {
    const params = new URLSearchParams();
    if (options.queryKey !== undefined) params.set('key', options.queryKey);
    if (options.timestamp !== undefined) params.set('timestamp', options.timestamp);
    const query = params.size ? `?${params}` : '';
    const headers: Record<string, string> = { Accept: 'text/event-stream', ...options.headers };
    if (options.key !== undefined) headers['X-Private-Key'] = options.key;
    if (options.lastEventId !== undefined) headers['Last-Event-ID'] = options.lastEventId;
    const controller = new AbortController();
    const response = await fetch(`${baseUrl}/hub/space/${spaceId}/messages/stream${query}`, {
      headers,
      signal: controller.signal,
    });
    if (response.status !== 200 || !response.body) {
      const text = await response.text();
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {}
      return { status: response.status, headers: response.headers, body, text };
    }
    return new SseStream(response.status, response.headers, controller, response.body);
  }

  /** Opens a stream that must answer 200. */
  static async connect(
    baseUrl: string,
    spaceId: string,
    options: OpenStreamOptions = {},
  ): Promise<SseStream> {
    const stream = await SseStream.open(baseUrl, spaceId, options);
    if (!(stream instanceof SseStream)) throw new Error(`stream answered ${stream.status}: ${stream.text}`);
    return stream;
  }

  /** The next event not yet taken, waiting for it up to `timeoutMs`. */
  async next(timeoutMs = 5000): Promise<SseEvent> {
    await this.waitUntil(() => this.cursor < this.events.length, timeoutMs, 'the next event');
    return this.events[this.cursor++]!;
  }

  /** Takes events up to and including the first that matches, returning them all. */
  async until(match: (event: SseEvent) => boolean, timeoutMs = 5000): Promise<SseEvent[]> {
    const taken: SseEvent[] = [];
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const event = await this.next(Math.max(1, deadline - Date.now()));
      taken.push(event);
      if (match(event)) return taken;
    }
  }

  /** Takes the next `count` events. */
  async take(count: number, timeoutMs = 5000): Promise<SseEvent[]> {
    await this.waitUntil(() => this.events.length - this.cursor >= count, timeoutMs, `${count} events`);
    const taken = this.events.slice(this.cursor, this.cursor + count);
    this.cursor += count;
    return taken;
  }

  /** Events not yet taken. */
  get remaining(): SseEvent[] {
    return this.events.slice(this.cursor);
  }

  async waitForEnd(timeoutMs = 5000): Promise<void> {
    await this.waitUntil(() => this.ended, timeoutMs, 'the end of the stream');
  }

  async waitUntil(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (this.ended && !condition()) throw new Error(`stream ended while waiting for ${what}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.remaining)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.controller.abort();
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          this.parseBlock(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
        this.wake();
      }
    } catch {
      // aborted by close()
    } finally {
      this.ended = true;
      this.wake();
    }
  }

  private parseBlock(block: string): void {
    let id: string | undefined;
    let event = 'message';
    const data: string[] = [];
    let hasField = false;
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) {
        this.comments.push(line.slice(1).trim());
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      hasField = true;
      if (field === 'id') id = value;
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (!hasField) return;
    const text = data.join('\n');
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {}
    this.events.push({ id, event, data: text, json });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
