import { sql } from 'drizzle-orm';
import { bookkeepingDbOf } from '../db';
import { arrayLiteral } from '../db/array-literal';
import { Batcher } from '../db/batcher';
import type { Db } from '../db/types';
import type { Deps } from '../deps';
import { hashSecret } from '../secrets';

export interface RecordPresenceOptions {
  deps: Deps;
  /** A space key that was presented: only a live participant's moves their lastSeenAt. */
  key: string;
}

const batchers = new WeakMap<Db, Batcher<{ keyHash: string; at: Date }, void>>();

/**
 * Notes that a participant's key was just used (an authenticated call, an open stream): their
 * `lastSeenAt`, which the server vouches for. Calls of a process arriving together share one
 * UPDATE by key hash; a key that names no live participant changes nothing. Callers throttle it
 * (the server writes a key at most every few seconds), so it costs next to nothing under load.
 */
export function recordPresence({ deps, key }: RecordPresenceOptions): Promise<void> {
  const { db, clock } = deps;
  let batcher = batchers.get(db);
  if (!batcher) {
    batcher = new Batcher(async (items) => {
      let at = items[0]!.at;
      for (const item of items) if (item.at > at) at = item.at;
      const hashes = [...new Set(items.map((item) => item.keyHash))];
      await bookkeepingDbOf(db).execute(sql`
        update participants set last_seen_at = ${at.toISOString()}::timestamptz
        where key_hash = any(${arrayLiteral(hashes)}::text[]) and status in ('active', 'muted')
          and (last_seen_at is null or last_seen_at < ${at.toISOString()}::timestamptz)
      `);
      return items.map(() => undefined);
    }, 1);
    batchers.set(db, batcher);
  }
  return batcher.push({ keyHash: hashSecret(key), at: clock.now() });
}
