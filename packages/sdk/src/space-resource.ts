import type { APIPromise } from './api-promise';
import type { OperationId, OperationTypes } from './generated';
import { held, keep } from './internal';
import type { RequestOptions, Transport } from './transport';

/** The key and the transport of each space resource, off its own properties (see keep). */
type ResourceHeld = { transport: Transport; key: string };

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
    keep(this, { transport, key });
  }

  /** @internal */
  protected get transport(): Transport {
    return held<ResourceHeld>(this).transport;
  }

  /** @internal */
  protected get key(): string {
    return held<ResourceHeld>(this).key;
  }

  /**
   * @internal Calls an operation of this space with this key: `path` holds the path's other
   * parameters (the space's id is added).
   */
  protected call<K extends OperationId>(
    operationId: K,
    path: Omit<NonNullable<OperationTypes[K]['path']>, 'spaceId'>,
    params: OperationTypes[K]['params'] | undefined,
    options: RequestOptions | undefined,
  ): APIPromise<OperationTypes[K]['output']> {
    return this.transport.call(
      operationId,
      {
        path: { ...path, spaceId: this.spaceId } as OperationTypes[K]['path'],
        params,
        credentials: { spaceKey: this.key },
      },
      options,
    );
  }

  /** The space, never the key: what `JSON.stringify` and `console.log` show. */
  toJSON(): { spaceId: string } {
    return { spaceId: this.spaceId };
  }
}
