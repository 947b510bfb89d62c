import { sql } from 'drizzle-orm';
import type { Db } from '../db/types';

/** How long an answer of the database is taken as its state, for the health probe. */
const REUSE_MS = 1_000;

const checks = new WeakMap<Db, { at: number; answered: Promise<void> }>();

/**
 * Whether the database answers, for the health probe (which no rate limit counts: a balancer's
 * probes must never be refused for their number): one `select 1` at a time for the whole process,
 * its answer taken for a second, so that however many probes come (several balancers, a flood)
 * the database sees at most about one query a second of them. A failure is thrown as any
 * database failure is (503 with Retry-After while it is unreachable) and never reused: the next
 * probe asks again.
 */
export function checkDatabase(db: Db, now: number = performance.now()): Promise<void> {
  const last = checks.get(db);
  if (last && now - last.at < REUSE_MS) return last.answered;
  const answered = db.execute(sql`select 1`).then(() => undefined);
  const entry = { at: now, answered };
  checks.set(db, entry);
  answered.catch(() => {
    if (checks.get(db) === entry) checks.delete(db);
  });
  return answered;
}
