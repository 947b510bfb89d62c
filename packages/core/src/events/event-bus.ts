import { sql } from 'drizzle-orm';
import type { Database } from '../db';
import type { Executor } from '../db/types';
import { EVENTS_CHANNEL, type EventNotice, MAX_INLINE_PAYLOAD } from './notice';

/** What a node does with the notices of the bus. */
export interface EventListener {
  /** A notice of an event some node (this one included) has committed. */
  notice(notice: EventNotice): void;
  /**
   * Notices may have been lost (the node's connection to the bus dropped and is back): read what
   * changed from the database. Streams already fill any gap they see; this catches the last events.
   */
  resync(): void;
  /**
   * A notice of an event this node has just committed, heard at once, ahead of the bus (see
   * EventBus.committed); the bus delivers it again, later, to `notice`.
   */
  committedHere(notice: EventNotice): void;
}

/**
 * The port between nodes: a write publishes a notice of each stream event it commits, and every
 * node hears every notice. The database stays the record: a notice only says "space S has event
 * N" (with the event when it is small), and a node that misses one reads the event back (streams
 * fill gaps by event id, and resync() reads the newest ids). So an adapter may deliver late or
 * twice, but never a notice of a write that did not commit.
 *
 * Today's adapter is PostgreSQL's LISTEN/NOTIFY (createNotifyBus): a NOTIFY inside the writing
 * transaction is delivered on commit, in commit order. A NATS or Redis adapter would publish
 * after commit (an outbox row written in the transaction, relayed by the committing node) and
 * implement the same four members; no use case changes.
 */
export interface EventBus {
  /** Inside the writing transaction: `notice` reaches every node when, and only if, it commits. */
  publish(ex: Executor, notice: EventNotice): Promise<void>;
  /**
   * True when publish is a SQL NOTIFY, which a writing statement may then send itself (the
   * group-committed send does, saving a round trip); otherwise such a statement returns its
   * notices and its caller publishes them.
   */
  readonly notifiesInSql: boolean;
  /**
   * After the transaction that published `notice` has committed: this node's own listeners hear
   * it at once (EventListener.committedHere) rather than after the bus's round trip through
   * PostgreSQL (the listening connection's backend woken, its notification read), which on a
   * busy machine waits for a core. The bus still delivers it, to every node, this one included.
   */
  committed(notice: EventNotice): void;
  /** Starts hearing every node's notices; resolves to the function that stops. */
  subscribe(listener: EventListener): Promise<() => Promise<void>>;
}

/** A notice as NOTIFY carries it: the event inline when it fits, else a pointer to it. */
export function noticePayload(notice: EventNotice): string {
  const payload = JSON.stringify(notice);
  if (Buffer.byteLength(payload) <= MAX_INLINE_PAYLOAD) return payload;
  return JSON.stringify({ spaceId: notice.spaceId, seq: notice.seq, kind: notice.kind });
}

/**
 * The bus over PostgreSQL LISTEN/NOTIFY (PGlite included): NOTIFY inside the writing
 * transaction, one LISTEN per node, re-established after the connection drops (then `resync`).
 */
export function createNotifyBus(database: Pick<Database, 'listen'>): EventBus {
  const listeners = new Set<EventListener>();
  return {
    notifiesInSql: true,
    async publish(ex, notice) {
      await ex.execute(sql`select pg_notify(${EVENTS_CHANNEL}, ${noticePayload(notice)})`);
    },
    committed(notice) {
      for (const listener of listeners) listener.committedHere(notice);
    },
    async subscribe(listener) {
      const unlisten = await database.listen(
        EVENTS_CHANNEL,
        (payload) => {
          let notice: EventNotice;
          try {
            notice = JSON.parse(payload) as EventNotice;
          } catch {
            return; // not ours: every notice on the channel is written by publish or the send statement
          }
          listener.notice(notice);
        },
        () => listener.resync(),
      );
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
        return unlisten();
      };
    },
  };
}
