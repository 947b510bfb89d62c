import { type Db, isUuid, type LeasedSpace, leaseStreams, STREAM_LEASE_SECONDS } from '@convene/core';

/** A lease this process wrote (see leaseStreams), as far as its own clock can vouch for it. */
interface Lease {
  /** Until when (this process's clock) the space's messages are certainly notified. */
  until: number;
  /** A renewal under way; listeners wait for it. */
  pending?: Promise<void>;
}

/** Trust a lease for half its length from the moment it was asked for (clock skew, slow commits). */
const LEASE_TRUST_MS = (STREAM_LEASE_SECONDS * 1000) / 2;

export interface StreamLeasesOptions {
  db: Db;
  /** The spaces this process still listens to (their leases are renewed, the others forgotten). */
  listened(): Iterable<string>;
  /** Each lease written, with the space's last event id then: the hub delivers what it missed. */
  onLeased(spaces: LeasedSpace[]): void;
}

/**
 * The stream leases of one process: messages of a space are NOTIFYed only while some node
 * leases it (`spaces.streamed_until`, see leaseStreams), so a listener waits for a lease before
 * it takes its starting position, and the hub renews the leases of the spaces it still listens
 * to. A renewal also tells which event ids the process may have missed (a lapsed lease, a
 * listener that reconnected).
 */
export class StreamLeases {
  private readonly leases = new Map<string, Lease>();

  constructor(private readonly options: StreamLeasesOptions) {}

  /**
   * Resolves once the space's messages are certainly notified to this process. The first
   * listener of a space writes a lease; later ones find it held.
   */
  ready(spaceId: string): Promise<void> {
    if (!isUuid(spaceId)) return Promise.resolve(); // names no space: the listener gets its 404
    const lease = this.leases.get(spaceId);
    if (lease?.pending) return lease.pending;
    if (lease && lease.until > Date.now()) return Promise.resolve();
    return this.lease([spaceId]);
  }

  /** Renews the lease of every space still listened to and forgets the others. */
  renew(): Promise<void> {
    const now = Date.now();
    const listened = new Set(this.options.listened());
    for (const [spaceId, lease] of this.leases) {
      if (!lease.pending && lease.until <= now && !listened.has(spaceId)) this.leases.delete(spaceId);
    }
    return this.lease(
      [...listened].filter((spaceId) => isUuid(spaceId) && !this.leases.get(spaceId)?.pending),
    );
  }

  private lease(spaceIds: string[]): Promise<void> {
    const asked = Date.now();
    const pending = leaseStreams(this.options.db, spaceIds).then((rows) => {
      for (const { spaceId } of rows) this.leases.set(spaceId, { until: asked + LEASE_TRUST_MS });
      this.options.onLeased(rows);
    });
    const settled = pending.finally(() => {
      for (const spaceId of spaceIds) {
        const lease = this.leases.get(spaceId);
        if (lease?.pending === settled) {
          if (lease.until > 0) delete lease.pending;
          else this.leases.delete(spaceId);
        }
      }
    });
    for (const spaceId of spaceIds) {
      this.leases.set(spaceId, { until: this.leases.get(spaceId)?.until ?? 0, pending: settled });
    }
    return settled;
  }
}
