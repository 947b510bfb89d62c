import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';

export interface Answer {
  /** 0 when no answer came: the connection was refused or cut, or the request timed out. */
  status: number;
  headers: Headers;
  body: any;
  /** The error of a request that got no answer. */
  failure?: string;
  /** When it was sent and answered (ms, Date.now()). */
  sentAt: number;
  answeredAt: number;
}

export interface CallOptions {
  key?: string | undefined;
  body?: unknown;
  headers?: Record<string, string>;
  /** Give up waiting after this long (the server's own limit is 30 s). */
  timeoutMs?: number;
}

/** One HTTP call that never throws: a connection refused or cut is an answer of status 0. */
export async function call(method: string, url: string, options: CallOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers['X-Private-Key'] = options.key;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  const sentAt = Date.now();
  try {
    const response = await fetch(url, {
      method,
      headers,
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      signal: AbortSignal.timeout(options.timeoutMs ?? 45_000),
    });
    const text = await response.text();
    let body: any = text;
    if ((response.headers.get('content-type') ?? '').includes('json') && text) body = JSON.parse(text);
    return { status: response.status, headers: response.headers, body, sentAt, answeredAt: Date.now() };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return {
      status: 0,
      headers: new Headers(),
      body: undefined,
      failure: cause?.code ?? cause?.message ?? String(error),
      sentAt,
      answeredAt: Date.now(),
    };
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `condition` until it holds, failing with `what` after `timeoutMs`. */
export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

/** Every message of a space, oldest first, paged through listMessages with its cursor. */
export async function allMessages(baseUrl: string, spaceId: string, key: string): Promise<any[]> {
  const messages: any[] = [];
  let cursor: string | undefined;
  for (;;) {
    const query = cursor ? `?timestamp=${encodeURIComponent(cursor)}` : '';
    const page = await call('GET', `${baseUrl}/hub/space/${spaceId}/messages${query}`, { key });
    if (page.status !== 200)
      throw new Error(`listMessages answered ${page.status}: ${JSON.stringify(page.body)}`);
    messages.push(...page.body.messages);
    if (page.body.messages.length === 0) return messages;
    cursor = page.body.cursor;
  }
}

export interface StreamedEvent {
  id: number | undefined;
  event: string;
  /** The data as sent. */
  text: string;
  /** The data parsed as JSON (on first use: readers of big messages only look at some). */
  readonly data: any;
  /** When the client parsed it (Date.now()). */
  at: number;
}

export interface StreamOptions {
  key: string;
  lastEventId?: number | undefined;
  /** Connect from this loopback address (stream caps count per address). */
  localAddress?: string;
  /**
   * What is kept of each event's data (all of it by default): readers of big messages drop their
   * padding, or a long run holds gigabytes of copies and the test's own pauses show as latency.
   */
  keep?: (text: string) => string;
}

/**
 * An event-stream client on node:http (so it can pick its source address), keeping every event
 * with the moment it arrived.
 */
export class SseReader {
  readonly events: StreamedEvent[] = [];
  ended = false;
  private buffer = '';

  private constructor(
    private readonly response: IncomingMessage,
    private readonly keep: (text: string) => string,
  ) {
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => this.take(chunk));
    const end = () => {
      this.ended = true;
    };
    response.on('end', end);
    response.on('close', end);
    response.on('error', end);
  }

  static open(baseUrl: string, spaceId: string, options: StreamOptions): Promise<SseReader> {
    const headers: Record<string, string> = { 'X-Private-Key': options.key, Accept: 'text/event-stream' };
    if (options.lastEventId !== undefined) headers['Last-Event-ID'] = String(options.lastEventId);
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${baseUrl}/hub/space/${spaceId}/messages/stream`, {
        headers,
        agent: false,
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      });
      req.on('response', (response) => {
        if (response.statusCode === 200) resolve(new SseReader(response, options.keep ?? ((text) => text)));
        else {
          response.resume();
          reject(new Error(`stream answered ${response.statusCode}`));
        }
      });
      req.on('error', reject);
      req.end();
    });
  }

  /** The `message` events. */
  messages(): StreamedEvent[] {
    return this.events.filter((e) => e.event === 'message');
  }

  close(): void {
    this.response.destroy();
  }

  private take(chunk: string): void {
    this.buffer += chunk;
    let start = 0;
    for (let end = this.buffer.indexOf('\n\n'); end >= 0; end = this.buffer.indexOf('\n\n', start)) {
      const event = parseFrame(this.buffer.slice(start, end), this.keep);
      if (event) this.events.push(event);
      start = end + 2;
    }
    this.buffer = this.buffer.slice(start);
  }
}

/** One SSE frame; undefined for a comment (`: ping`). */
export function parseFrame(
  frame: string,
  keep: (text: string) => string = (text) => text,
): StreamedEvent | undefined {
  let id: number | undefined;
  let event = 'message';
  const data: string[] = [];
  for (const line of frame.split('\n')) {
    if (line.startsWith(':') || line === '') continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = Number(value);
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return undefined;
  const text = keep(data.join('\n'));
  let parsed: unknown;
  return {
    id,
    event,
    text,
    get data() {
      if (parsed === undefined) {
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = text;
        }
      }
      return parsed;
    },
    at: Date.now(),
  };
}

/**
 * A stream client that reads the answer's head and first frames, then stops reading: the
 * server's writes to it fill the kernel's buffers, then the server's own.
 */
export class StalledStream {
  private text = '';
  private closed = false;

  private constructor(private readonly socket: Socket) {
    socket.on('close', () => {
      this.closed = true;
    });
    socket.on('error', () => {});
  }

  /** Opens a stream that resumes after `lastEventId`, so it replays nothing before going live. */
  static open(
    baseUrl: string,
    spaceId: string,
    options: Required<Omit<StreamOptions, 'keep'>> & { lastEventId: number },
  ): Promise<StalledStream> {
    const { key, lastEventId, localAddress } = options;
    const url = new URL(baseUrl);
    const socket = connect({ host: url.hostname, port: Number(url.port), localAddress });
    const stalled = new StalledStream(socket);
    return new Promise((resolve, reject) => {
      socket.once('error', reject);
      socket.setEncoding('utf8');
      const onData = (chunk: string) => {
        stalled.text += chunk;
        if (stalled.text.includes('event: context')) {
          socket.off('data', onData);
          socket.pause();
          if (!stalled.text.startsWith('HTTP/1.1 200')) reject(new Error(stalled.text.split('\r\n')[0]));
          else resolve(stalled);
        }
      };
      socket.on('data', onData);
      socket.write(
        `GET /hub/space/${spaceId}/messages/stream HTTP/1.1\r\nHost: ${url.host}\r\n` +
          `X-Private-Key: ${key}\r\nLast-Event-ID: ${lastEventId}\r\n\r\n`,
      );
    });
  }

  /**
   * Reads again: what the kernel held for it, until the connection ends. True when the server
   * had closed it (the end comes within `timeoutMs`), with the events read in all.
   */
  async resume(timeoutMs: number): Promise<{ closed: boolean; events: StreamedEvent[] }> {
    this.socket.on('data', (chunk: string) => {
      this.text += chunk;
    });
    this.socket.resume();
    const deadline = Date.now() + timeoutMs;
    while (!this.closed && Date.now() < deadline) await sleep(50);
    const closed = this.closed;
    this.socket.destroy();
    const body = this.text.slice(this.text.indexOf('\r\n\r\n') + 4);
    // Complete frames only: a cut connection may end mid-frame. Each frame is one chunk of the
    // chunked body, so a chunk's size line only precedes a frame, where parseFrame ignores it.
    const frames = body.split('\n\n').slice(0, -1);
    const events = frames
      .map((frame) => parseFrame(frame))
      .filter((e): e is StreamedEvent => e !== undefined);
    return { closed, events };
  }

  close(): void {
    this.socket.destroy();
  }
}
