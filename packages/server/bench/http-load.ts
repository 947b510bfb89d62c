import { connect, type Socket } from 'node:net';

/** One request template per connection: the bytes to write, built once. */
export type RequestFor = (connection: number) => Buffer;

export interface LoadOptions {
  port: number;
  /** The port of each connection, when the load is spread over several servers. */
  portOf?: (connection: number) => number;
  connections: number;
  durationMs: number;
  /** Hard ceiling on requests, whatever the duration. */
  maxRequests: number;
  request: RequestFor;
}

export interface LoadResult {
  requests: number;
  errors: number;
  statuses: Record<number, number>;
  elapsedMs: number;
  /** Request latencies in ms. */
  latencies: number[];
}

/**
 * A closed-loop HTTP/1.1 load generator over raw keep-alive sockets (loopback only): each
 * connection writes a prebuilt request, waits for the whole response, and writes the next.
 * Bounded by time and by count. Cheap enough per request that it does not hide the server.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let requests = 0;
  let errors = 0;
  const started = performance.now();
  const deadline = started + options.durationMs;
  const one = (index: number) =>
    new Promise<void>((resolve) => {
      const request = options.request(index);
      const socket: Socket = connect({
        port: options.portOf?.(index) ?? options.port,
        host: '127.0.0.1',
        noDelay: true,
      });
      let buffer: Buffer = Buffer.alloc(0);
      let sentAt = 0;
      const send = () => {
        if (performance.now() >= deadline || requests >= options.maxRequests) {
          socket.end();
          return;
        }
        requests++;
        sentAt = performance.now();
        socket.write(request);
      };
      socket.on('connect', send);
      socket.on('data', (chunk: Buffer) => {
        buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk;
        for (;;) {
          const headerEnd = buffer.indexOf('\r\n\r\n');
          if (headerEnd < 0) return;
          const head = buffer.subarray(0, headerEnd).toString('latin1');
          const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? Number.NaN);
          if (Number.isNaN(length)) {
            errors++;
            socket.destroy();
            return;
          }
          if (buffer.length < headerEnd + 4 + length) return;
          const status = Number(head.slice(9, 12));
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (status >= 400) errors++;
          latencies.push(performance.now() - sentAt);
          buffer = buffer.subarray(headerEnd + 4 + length);
          send();
        }
      });
      socket.on('error', () => {
        errors++;
      });
      socket.on('close', () => resolve());
    });
  await Promise.all(Array.from({ length: options.connections }, (_, i) => one(i)));
  return { requests, errors, statuses, elapsedMs: performance.now() - started, latencies };
}

export function httpRequest(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Buffer {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: keep-alive'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (body !== undefined) {
    lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
  }
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body ?? ''}`);
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
