import {
  type ClaimedDelivery,
  claimWebhookDeliveries,
  completeWebhookDelivery,
  type Database,
  type Deps,
  failWebhookDelivery,
  queueWebhookDeliveries,
  WEBHOOKS_CHANNEL,
} from '@convene/core';
import type { WebhookPoster } from './post';

export interface WebhookWorkerOptions {
  database: Database;
  deps: Deps;
  poster: WebhookPoster;
  /** Deliveries claimed at once (and attempted concurrently). */
  batch?: number;
  /** How long a claim holds: past it, a node that died mid-attempt leaves the delivery to another. */
  leaseMs?: number;
  /**
   * A look at the queue even when nothing was notified: another node's retries coming due, or
   * the claims of a node that died.
   */
  pollMs?: number;
  onError?: (error: unknown, what: string) => void;
  /**
   * An attempt this node's network policy refused (see WebhookPostResult.refused): with the
   * same settings on every node it happens only to a host that now resolves to a private address
   * (DNS rebinding); otherwise this node lacks what another allowed.
   */
  onRefused?: (delivery: ClaimedDelivery) => void;
}

/**
 * Each node runs one: it wakes when an event is recorded in a space with webhooks (NOTIFY on
 * commit), when a retry it scheduled comes due, and every `pollMs`. It then queues the new events
 * of the webhooks no other node is queueing (each event once), claims due deliveries for itself
 * alone (SKIP LOCKED, then a lease) and sends them, so each attempt is made by exactly one node.
 */
export class WebhookWorker {
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private unlisten: (() => Promise<void>) | undefined;
  private poller: NodeJS.Timeout | undefined;
  private readonly retries = new Set<NodeJS.Timeout>();

  constructor(private readonly options: WebhookWorkerOptions) {}

  async start(): Promise<void> {
    this.unlisten = await this.options.database.listen(WEBHOOKS_CHANNEL, () => this.kick());
    this.poller = setInterval(() => this.kick(), this.options.pollMs ?? 10_000);
    this.poller.unref();
    this.kick();
  }

  /** Looks at the queue now (or once more after the current pass). */
  kick(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .catch((error) => this.options.onError?.(error, 'delivering webhooks'))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async drain(): Promise<void> {
    const { deps } = this.options;
    await queueWebhookDeliveries({ deps });
    while (!this.closed) {
      const claimed = await claimWebhookDeliveries({
        deps,
        limit: this.options.batch ?? 16,
        leaseMs: this.options.leaseMs ?? 60_000,
      });
      if (claimed.length === 0) return;
      await Promise.all(claimed.map((delivery) => this.attempt(delivery)));
    }
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const { deps, poster } = this.options;
    try {
      const result = await poster.post(delivery);
      if (result.ok) {
        await completeWebhookDelivery({ deps, delivery });
        return;
      }
      // Counted as a failed attempt all the same, not left to another node: a delivery every node
      // refuses is still given up on its schedule, never passed round for ever. Its retry goes to
      // whichever node claims it then.
      if (result.refused) this.options.onRefused?.(delivery);
      const outcome = await failWebhookDelivery({
        deps,
        delivery,
        error: result.error ?? 'failed',
        permanent: result.gone,
      });
      if (outcome.outcome === 'retry') this.retryAt(outcome.at);
    } catch (error) {
      // The claim lapses after its lease and the delivery is attempted again then.
      this.options.onError?.(error, `webhook delivery ${delivery.id}`);
    }
  }

  /** Looks again when this node's retry is due (other nodes find it at their next poll). */
  private retryAt(at: Date): void {
    if (this.closed) return;
    const timer = setTimeout(
      () => {
        this.retries.delete(timer);
        this.kick();
      },
      Math.max(0, at.getTime() - this.options.deps.clock.now().getTime()) + 5,
    );
    timer.unref();
    this.retries.add(timer);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.poller) clearInterval(this.poller);
    for (const timer of this.retries) clearTimeout(timer);
    this.retries.clear();
    await this.unlisten?.().catch((error) => this.options.onError?.(error, 'unlisten'));
    // An attempt still running after this is abandoned: its claim lapses and it is made again.
    await Promise.race([this.running, new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
    this.options.poster.close();
  }
}
