import { randomUUID } from 'node:crypto';
import {
  claimStreamSlot,
  type Db,
  releaseStreamSlots,
  renewStreamNode,
  retireStreamNode,
  TooManyStreamsError,
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
   * This node is the only one its database can have (embedded PGlite, one server per data
   * directory): its own count is the whole count, kept in memory.
   */
  exclusive: boolean;
  onError(error: unknown, what: string): void;
}

/**
 * The open-stream caps (decisions.md, Abuse and faults: 20 per credential, 200 per remote
 * address, 429 beyond), counted across every node that shares the database.
 */
export interface StreamCaps {
  start(): Promise<void>;
  /**
   * Takes a slot for a new stream of `credential` from `address` (both hashed), or throws a 429
   * (TooManyStreamsError); resolves to the function that gives the slot back.
   */
  admit(credential: string, address: string): Promise<() => void>;
  /** Streams holding a slot on this node (tests, metrics). */
  readonly open: number;
  /** Gives back every slot of this node (shutdown). */
  close(): Promise<void>;
}

export function streamCaps(options: StreamCapsOptions): StreamCaps {
  return options.exclusive ? new LocalStreamCaps(options) : new SharedStreamCaps(options);
}

/**
 * The caps of a node that shares its database (PostgreSQL): the count is the database's
 * (`stream_slots`, see claimStreamSlot), so the caps hold across every node as the rate limits
 * do. The node keeps its lease alive (its slots count while it runs, and stop counting soon
 * after a crash), gives slots back in batches as streams end (a slot given back no longer counts
 * for this node's claims, even before its row is deleted), and retries what it could not give
 * back (the database away, a claim whose answer was lost) at the next renewal.
 */
class SharedStreamCaps implements StreamCaps {
  readonly nodeId = randomUUID();
  private local = 0;
  private readonly unreleased = new Set<string>();
  private flushing: Promise<void> | undefined;
  private renewer: NodeJS.Timeout | undefined;
  private retired = false;

  constructor(private readonly options: StreamCapsOptions) {}

  async start(): Promise<void> {
    await renewStreamNode(this.options.db, this.nodeId);
    this.renewer = setInterval(() => void this.renew(), this.options.renewMs);
    this.renewer.unref();
  }

  async admit(credential: string, address: string): Promise<() => void> {
    const slotId = randomUUID();
    const { db, perCredential, perAddress } = this.options;
    const releasing = [...this.unreleased];
    try {
      await claimStreamSlot(db, {
        slotId,
        nodeId: this.nodeId,
        credential,
        address,
        perCredential,
        perAddress,
        releasing,
      });
    } catch (error) {
      // The claim may have committed with its answer lost: give the slot back, to be sure.
      if (!(error instanceof TooManyStreamsError)) this.unreleased.add(slotId);
      throw error;
    }
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

  get open(): number {
    return this.local;
  }

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
        // Kept for the next renewal; meanwhile this node's claims already leave them out.
        (error) => this.options.onError(error, 'releasing stream slots'),
      )
      .finally(() => {
        this.flushing = undefined;
        // Streams that ended meanwhile; after a failure, the renewal retries.
        if (released) this.flush();
      });
  }
}

/** The caps of the only node of its database: counted in memory, exactly and for free. */
class LocalStreamCaps implements StreamCaps {
  private readonly byCredential = new Map<string, number>();
  private readonly byAddress = new Map<string, number>();

  constructor(private readonly options: StreamCapsOptions) {}

  async start(): Promise<void> {}

  async admit(credential: string, address: string): Promise<() => void> {
    if ((this.byCredential.get(credential) ?? 0) >= this.options.perCredential)
      throw new TooManyStreamsError('key');
    if ((this.byAddress.get(address) ?? 0) >= this.options.perAddress)
      throw new TooManyStreamsError('address');
    bump(this.byCredential, credential, 1);
    bump(this.byAddress, address, 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      bump(this.byCredential, credential, -1);
      bump(this.byAddress, address, -1);
    };
  }

  get open(): number {
    let n = 0;
    for (const count of this.byAddress.values()) n += count;
    return n;
  }

  async close(): Promise<void> {}
}

function bump(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
