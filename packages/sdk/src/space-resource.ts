import { hidden } from './internal';
import type { Transport } from './transport';

/** The key and the transport of each space resource, off its own properties (see hidden). */
const held = /* @__PURE__ */ hidden<{ transport: Transport; key: string }>();

/**
 * One group of a space client's operations (messages, inbox, artifacts, webhooks): the space it
 * acts on, and the transport and key it acts with, kept where no console lists them.
 */
export abstract class SpaceResource {
  /** @internal */
  constructor(
    transport: Transport,
    protected readonly spaceId: string,
    key: string,
    /**
     * Whose key it is, when the space client knows: a stream ends with its membership, and a
     * nested withLock names it as the lock's holder.
     */
    protected readonly participantId?: string,
  ) {
    held.keep(this, { transport, key });
  }

  /** @internal */
  protected get transport(): Transport {
    return held.of(this).transport;
  }

  /** @internal */
  protected get key(): string {
    return held.of(this).key;
  }

  /** The space, never the key: what `JSON.stringify` and `console.log` show. */
  toJSON(): { spaceId: string } {
    return { spaceId: this.spaceId };
  }
}
