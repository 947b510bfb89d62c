import { sql } from 'drizzle-orm';
import { rowsOf } from './migrate';
import { sqlState } from './pg-error';
import type { Db } from './types';

/**
 * How often each node looks for stalled sessions (`endStalledSessions`): a stalled session is
 * ended between its bound and its bound plus this.
 */
export const STALLED_SESSION_SWEEP_MS = 3_000;

/**
 * How much short of its bound a session's time seen stalled may fall (a third of a sweep, or of a
 * shorter bound): sweeps are timers, and the first one's look also connects, so the sweep one
 * bound after the first sighting measured 14.99 s, and the session was ended a sweep later (20.7 s
 * in the fault test).
 */
const jitterMs = (afterMs: number) => Math.min(STALLED_SESSION_SWEEP_MS, afterMs) / 3;

/** A session of the service that was ended: which, and how long it had been seen waiting. */
export interface EndedSession {
  pid: number;
  applicationName: string;
  waitedMs: number;
}

/**
 * When each stalled session was first seen (by the database's clock, ms), under a key that changes
 * whenever the session receives a message: its pid, its start and its last change of state. One
 * per node, kept from one sweep to the next.
 */
export type StalledSightings = Map<string, number>;

export interface EndStalledSessionsOptions {
  /** A connection of its own: the pool may be full of requests waiting behind the stalled session. */
  db: Db;
  /** How long a session may wait on its node (IDLE_IN_TRANSACTION_TIMEOUT_MS). */
  afterMs: number;
  sightings: StalledSightings;
}

/**
 * The service's sessions (its pools name themselves `convene…`) of this database and role, other
 * than this one, that are in the middle of a statement and waiting for the rest of it from their
 * node: `active`, reading from the client. A live node sends a statement's messages within
 * milliseconds of each other (postgres.js sends Parse/Describe/Flush, then Bind/Execute/Sync once
 * the description is back; no COPY and no cursors are used), so a session seen so for seconds
 * belongs to a node that stopped there: frozen or cut off. PostgreSQL 15 bounds only sessions that
 * are idle in their transaction; these hold their row locks until their node comes back.
 */
const stalled = (extra: ReturnType<typeof sql>) => sql`
  select pid, application_name as "applicationName",
         concat(pid, '/', extract(epoch from backend_start), '/', extract(epoch from state_change)) as sighting,
         extract(epoch from clock_timestamp()) * 1000 as "nowMs"
  from pg_stat_activity
  where datname = current_database() and usename = current_user and pid <> pg_backend_pid()
    and application_name like 'convene%' and state = 'active'
    and wait_event_type = 'Client' and wait_event = 'ClientRead' ${extra}`;

/**
 * Ends the sessions seen stalled (see `stalled`) for `afterMs` or more, with pg_terminate_backend,
 * which rolls their transactions back, as `idle_in_transaction_session_timeout` does for idle
 * ones: the other nodes' writes then go on. The first sighting starts the count (a statement may
 * have run long before its client's next message was due), so a session is ended `afterMs` to
 * `afterMs` plus one sweep after it stalled (give or take the sweeps' jitter), and only if it
 * stayed so all along: any message it received changes its key. Any node may end any node's
 * session (the same role may signal its own backends); several ending the same one is harmless.
 * Returns the sessions it ended.
 */
export async function endStalledSessions({
  db,
  afterMs,
  sightings,
}: EndStalledSessionsOptions): Promise<EndedSession[]> {
  const seen = rowsOf<{ pid: number; applicationName: string; sighting: string; nowMs: number | string }>(
    await db.execute(stalled(sql``)),
  );
  for (const key of sightings.keys()) if (!seen.some((s) => s.sighting === key)) sightings.delete(key);
  const ended: EndedSession[] = [];
  for (const session of seen) {
    const now = Number(session.nowMs);
    const since = sightings.get(session.sighting) ?? now;
    sightings.set(session.sighting, since);
    if (now - since < afterMs - jitterMs(afterMs)) continue;
    // Only if it is still the same stall: it may have gone on since the look above.
    const [signalled] = rowsOf<{ ended: boolean }>(
      await db
        .execute(sql`
          select pg_terminate_backend(pid) as ended from (${stalled(sql`and pid = ${session.pid}`)}) s
          where sighting = ${session.sighting}`)
        .catch((error: unknown) => {
          throw sqlState(error) === '42501' ? privilegeError(error) : error;
        }),
    );
    sightings.delete(session.sighting);
    if (signalled?.ended)
      ended.push({ pid: session.pid, applicationName: session.applicationName, waitedMs: now - since });
  }
  return ended;
}

/** PostgreSQL refused to signal a session of the nodes' own role (a managed service's rules). */
const privilegeError = (cause: unknown) =>
  new Error(
    "the nodes' PostgreSQL role may not end its own stalled sessions (pg_terminate_backend refused, " +
      'SQLSTATE 42501): a frozen node can then hold the others until it wakes; grant the role ' +
      'pg_signal_backend',
    { cause },
  );
