import { sql } from 'drizzle-orm';
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
}

/**
 * Counts a new stream against the caps of its credential and its address across every node, and
 * takes a slot for it, or throws TooManyStreamsError (decisions.md: at most 20 open streams per
 * credential and 200 per remote address, 429 beyond). Transaction-scoped advisory locks on the
 * credential and the address (always in that order) serialise the claims that could exceed the
 * same cap, so two nodes can never both take the last slot; slots of lapsed nodes do not count.
 */
export async function claimStreamSlot(db: Db, claim: StreamSlotClaim): Promise<void> {
  const refused = await db.transaction(async (tx) => {
    await tx.execute(sql`
      select pg_advisory_xact_lock(hashtextextended(${`stream-slots:credential:${claim.credential}`}, 0)),
             pg_advisory_xact_lock(hashtextextended(${`stream-slots:address:${claim.address}`}, 0))`);
    // A new statement, so its snapshot has every slot committed before the locks were granted.
    const [counts] = rowsOf<{
      by_credential: number | string;
      by_address: number | string;
      taken: number | string;
    }>(
      await tx.execute(sql`
        with live as (
          select s.credential, s.address
          from stream_slots s join stream_nodes n on n.id = s.node_id
          where (s.credential = ${claim.credential} or s.address = ${claim.address})
            and n.alive_until > now()
        ), counts as (
          select count(*) filter (where credential = ${claim.credential}) as by_credential,
                 count(*) filter (where address = ${claim.address}) as by_address
          from live
        ), taken as (
          insert into stream_slots (id, node_id, credential, address, opened_at)
          select ${claim.slotId}, ${claim.nodeId}, ${claim.credential}, ${claim.address}, now()
          from counts
          where by_credential < ${claim.perCredential} and by_address < ${claim.perAddress}
          returning id
        )
        select by_credential, by_address, (select count(*) from taken) as taken from counts`),
    );
    if (Number(counts?.taken) === 1) return undefined;
    return Number(counts?.by_credential) >= claim.perCredential ? 'key' : 'address';
  });
  if (refused) throw new TooManyStreamsError(refused);
}

/** Gives slots back (their streams ended). */
export async function releaseStreamSlots(ex: Executor, slotIds: readonly string[]): Promise<void> {
  if (slotIds.length === 0) return;
  await ex.execute(sql`delete from stream_slots where id = any(${`{${slotIds.join(',')}}`}::uuid[])`);
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
 * Forgets every node and slot: for a server that is the only one its database can have (the
 * embedded PGlite, one data directory per server), starting again after a crash.
 */
export async function forgetStreamNodes(db: Db): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`delete from stream_slots`);
    await tx.execute(sql`delete from stream_nodes`);
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
