import { RateLimitedError } from '@convene/core';

export interface StreamCapsOptions {
  /** Open streams one credential may hold on this node (20). */
  perCredential: number;
  /** Open streams one remote address may hold on this node (200). */
  perAddress: number;
}

/** How long a refused client is told to wait: a stream of its own has to end first. */
const RETRY_AFTER_SECONDS = 5;

/** A stream beyond a cap: 429 with Retry-After, as every other limit. */
export class TooManyStreamsError extends RateLimitedError {
  constructor(what: string) {
    super(RETRY_AFTER_SECONDS);
    this.message = `too many open streams for this ${what}; close one first`;
  }
}

/**
 * The open-stream caps (decisions.md, Abuse and faults: 20 per credential, 200 per remote
 * address, 429 beyond). A stream holds memory and a socket of the node that serves it, so the caps
 * are counted per node, where that memory is: a client cannot make one node hold more than its
 * share, whatever it does on the others (each node is bounded by its own caps).
 */
export class StreamCaps {
  private readonly byCredential = new Map<string, number>();
  private readonly byAddress = new Map<string, number>();

  constructor(private readonly options: StreamCapsOptions) {}

  /** Counts a stream in, or throws TooManyStreamsError; returns the function that counts it out. */
  admit(credential: string, address: string): () => void {
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

  /** Streams counted now (tests, metrics). */
  get open(): number {
    let n = 0;
    for (const count of this.byAddress.values()) n += count;
    return n;
  }
}

function bump(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
