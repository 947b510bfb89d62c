import { randomUUID } from 'node:crypto';
import {
  claimStreamSlot,
  type Db,
  forgetStreamNodes,
  releaseStreamSlots,
  renewStreamNode,
  retireStreamNode,
} from '@convene/core';

export interface StreamCapsOptions {
  db: Db;
  /** Open streams one credential may hold across every node (20). */
  perCredential: number;
  /** Open streams one remote address may hold across every node (200). */
  perAddress: number;
  /** How often this node says it is alive, well inside STREAM_NODE_LEASE_SECONDS. */
  renewMs: number;
  /**
   * This node is the only one its database can have (embedded PGlite): slots an earlier run
   * left behind (a crash) are forgotten when it starts, instead of after their lease.
   */
  exclusive: boolean;
  onError(error: unknown, what: string): void;
}

/**
 * This node's side of the open-stream caps (decisions.md, Abuse and faults: 20 per credential,
 * 200 per remote address, 429 beyond). The count is the database's (`stream_slots`, see
 * claimStreamSlot), so the caps hold across every node as the rate limits do. The node keeps its
 * lease alive (its slots count while it runs, and stop counting soon after a crash), gives slots
 * back in batches as streams end, and retries what it could not give back (the database away)
 * at the next renewal.
 */
export class StreamCaps {
  readonly nodeId = randomUUID();
  private local = 0;
  private readonly unreleased = new Set<string>();
  private flushing: Promise<void> | undefined;
  private renewer: NodeJS.Timeout | undefined;
  private retired = false;

  constructor(private readonly options: StreamCapsOptions) {}

  /** Takes the node's lease (and, when exclusive, clears a previous run's slots). */
  async start(): Promise<void> {
    if (this.options.exclusive) await forgetStreamNodes(this.options.db);
    await renewStreamNode(this.options.db, this.nodeId);
    this.renewer = setInterval(() => void this.renew(), this.options.renewMs);
    this.renewer.unref();
  }

  /**
   * Takes a slot for a new stream of `credential` from `address` (both hashed), or throws a 429
   * (TooManyStreamsError); resolves to the function that gives the slot back.
   */
  async admit(credential: string, address: string): Promise<() => void> {
    const slotId = randomUUID();
    const { db, perCredential, perAddress } = this.options;
    await claimStreamSlot(db, {
      slotId,
      nodeId: this.nodeId,
      credential,
      address,
      perCredential,
      perAddress,
    });
    this.local++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.local--;
      this.unreleased.add(slotId);
      this.flush();
    };
  }

  /** Streams holding a slot on this node (tests, metrics). */
  get open(): number {
    return this.local;
  }

  /** Stops renewing and gives back every slot of this node at once (shutdown). */
  async close(): Promise<void> {
    if (this.renewer) clearInterval(this.renewer);
    this.retired = true;
    await this.flushing;
    await retireStreamNode(this.options.db, this.nodeId).catch((error) =>
      this.options.onError(error, 'retiring stream slots'),
    );
  }

  private async renew(): Promise<void> {
    try {
      await renewStreamNode(this.options.db, this.nodeId);
    } catch (error) {
      this.options.onError(error, 'renewing the stream node lease');
    }
    this.flush();
  }

  /** Deletes the slots given back since the last flush, one statement at a time. */
  private flush(): void {
    if (this.flushing || this.retired || this.unreleased.size === 0) return;
    const slotIds = [...this.unreleased];
    let released = false;
    this.flushing = releaseStreamSlots(this.options.db, slotIds)
      .then(
        () => {
          released = true;
          for (const slotId of slotIds) this.unreleased.delete(slotId);
        },
        // Kept for the next renewal; until then they only make the caps stricter.
        (error) => this.options.onError(error, 'releasing stream slots'),
      )
      .finally(() => {
        this.flushing = undefined;
        // Streams that ended meanwhile; after a failure, the renewal retries.
        if (released) this.flush();
      });
  }
}
