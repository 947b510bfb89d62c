import { sql } from 'drizzle-orm';
import { arrayLiteral } from '../db/array-literal';
import { rowsOf } from '../db/migrate';
import type { Db, Executor } from '../db/types';
import { RateLimitedError } from '../errors';

/**
 * How long a node's word that it is alive lasts, in seconds of the database's clock. A node
 * renews it every few seconds; the stream slots of a node that stopped renewing (killed, cut off
 * from the database) stop counting once it lapses, so a crash frees its clients' slots this soon.
 */
export const STREAM_NODE_LEASE_SECONDS = 6;

/** A lapsed node's rows are deleted this long after its lease ended (by the policy sweeper). */
const LAPSED_NODE_RETENTION_SECONDS = 600;

/** How long a refused client is told to wait: a stream of its own has to end first. */
const RETRY_AFTER_SECONDS = 5;

/** A stream beyond a cap: 429 with Retry-After, as every other limit. */
export class TooManyStreamsError extends RateLimitedError {
  constructor(what: 'key' | 'address') {
    super(RETRY_AFTER_SECONDS, `too many open streams for this ${what}; close one first`);
  }
}

export interface StreamSlotClaim {
  /** The slot's id, chosen by the node (it releases the slot by it). */
  slotId: string;
  nodeId: string;
  /** SHA-256 of the credential the stream was opened with. */
  credential: string;
  /** SHA-256 of the remote address it was opened from. */
  address: string;
  /** Open streams allowed per credential (20) and per address (200), across every node. */
  perCredential: number;
  perAddress: number;
  /** Slots the node has given back and not yet deleted: they no longer count. */
  releasing?: readonly string[];
}

/**
 * Counts a new stream against the caps of its credential and its address across every node, and
 * takes a slot for it, or throws TooManyStreamsError (decisions.md: at most 20 open streams per
 * credential and 200 per remote address, 429 beyond). One call of the `claim_stream_slot`
 * function (migration 0013): advisory locks on the credential and the address, always in that
 * order, serialise the claims that could exceed the same cap, so two nodes never both take the
 * last slot. The claiming node's own slots always count, another node's while its lease runs.
 */
export async function claimStreamSlot(ex: Executor, claim: StreamSlotClaim): Promise<void> {
  const [row] = rowsOf<{ refused: 'key' | 'address' | null }>(
    await ex.execute(sql`
      select claim_stream_slot(
        ${claim.slotId}, ${claim.nodeId}, ${claim.credential}, ${claim.address},
        ${claim.perCredential}, ${claim.perAddress}, ${arrayLiteral(claim.releasing ?? [])}::uuid[]
      ) as refused`),
  );
  if (row?.refused) throw new TooManyStreamsError(row.refused);
}

/** Gives slots back (their streams ended). */
export async function releaseStreamSlots(ex: Executor, slotIds: readonly string[]): Promise<void> {
  if (slotIds.length === 0) return;
  await ex.execute(sql`delete from stream_slots where id = any(${arrayLiteral(slotIds)}::uuid[])`);
}

/**
 * Says that a node is alive for the next STREAM_NODE_LEASE_SECONDS: its slots count. A node
 * calls it when it starts, before its first stream, and then every few seconds.
 */
export async function renewStreamNode(ex: Executor, nodeId: string): Promise<void> {
  await ex.execute(sql`
    insert into stream_nodes (id, alive_until)
    values (${nodeId}, now() + make_interval(secs => ${STREAM_NODE_LEASE_SECONDS}))
    on conflict (id) do update set alive_until = excluded.alive_until`);
}

/** A node stopping: its slots and its row go at once. */
export async function retireStreamNode(db: Db, nodeId: string): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`delete from stream_slots where node_id = ${nodeId}`);
    await tx.execute(sql`delete from stream_nodes where id = ${nodeId}`);
  });
}

/**
 * Deletes up to `limit` slots of nodes whose lease ended long ago (or that are gone: a claim that
 * finished as its node retired), and such nodes once they have none left; returns how many rows
 * went (the policy sweeper calls it until fewer than `limit`).
 */
export async function sweepStreamNodes(db: Db, limit: number): Promise<number> {
  return db.transaction(async (tx) => {
    const retention = sql`now() - make_interval(secs => ${LAPSED_NODE_RETENTION_SECONDS})`;
    const slots = rowsOf(
      await tx.execute(sql`
        delete from stream_slots where id in (
          select s.id from stream_slots s left join stream_nodes n on n.id = s.node_id
          where n.id is null or n.alive_until < ${retention}
          limit ${limit}
        ) returning id`),
    ).length;
    if (slots === limit) return slots;
    const nodes = rowsOf(
      await tx.execute(sql`
        delete from stream_nodes n where n.alive_until < ${retention}
          and not exists (select 1 from stream_slots s where s.node_id = n.id)
        returning id`),
    ).length;
    return slots + nodes;
  });
}
