import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  body: string;
  /** The status this receiver answered. */
  status: number;
}

/**
 * A webhook receiver on loopback: records every request and answers what `answer` says (200 by
 * default), so tests can make it fail, then succeed.
 */
export class WebhookReceiver {
  readonly received: ReceivedDelivery[] = [];
  answer: (delivery: Omit<ReceivedDelivery, 'status'>, attempt: number) => number = () => 200;
  private waiters: (() => void)[] = [];

  private constructor(private readonly server: Server) {}

  static async start(): Promise<WebhookReceiver> {
    let receiver: WebhookReceiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const r = receiver!;
        const delivery = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        const attempt =
          r.received.filter((d) => d.headers['webhook-id'] === req.headers['webhook-id']).length + 1;
        const status = r.answer(delivery, attempt);
        r.received.push({ ...delivery, status });
        res.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
        for (const wake of r.waiters.splice(0)) wake();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver = new WebhookReceiver(server);
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** The deliveries answered 2xx, parsed. */
  get accepted(): { id: string; type: string; data: any; spaceId: string }[] {
    return this.received
      .filter((d) => d.status >= 200 && d.status < 300)
      .map((d) => ({ id: String(d.headers['webhook-id']), ...JSON.parse(d.body) }));
  }

  /** Waits until `condition` holds (checked at every delivery), up to `timeoutMs`. */
  async until(condition: () => boolean, timeoutMs = 15_000, what = 'the deliveries'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; received ${this.received.length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 250));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
