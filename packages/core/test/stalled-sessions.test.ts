import { connect, type Socket } from 'node:net';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { openDatabase, rowsOf } from '../src/db';
import type { Db } from '../src/db/types';

const url = process.env.TEST_DATABASE_URL;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One message of PostgreSQL's protocol: its type, its length, its body. */
const message = (type: string, body: Buffer) => {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
};
const cstrings = (...values: string[]) => Buffer.from(values.map((v) => `${v}\0`).join(''));

/**
 * A client that opens a transaction holding an advisory lock, then sends the Parse of a statement
 * and nothing more, as a node frozen between postgres.js's Parse/Describe/Flush and its
 * Bind/Execute/Sync: its session stays `active`, reading from its client, with the lock held.
 * Speaks the protocol itself: a driver always finishes what it began.
 */
async function stallMidStatement(applicationName: string, lockKey: number) {
  const target = new URL(url!);
  const socket: Socket = connect(Number(target.port || 5432), target.hostname);
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => {});
  let received = Buffer.alloc(0);
  let readyForQuery = 0;
  // Its backend's pid, from BackendKeyData: the session this client stalls, among the others of
  // the same application name (the nodes' sessions of tests running beside this one).
  let pid = 0;
  socket.on('data', (chunk) => {
    received = Buffer.concat([received, chunk]);
    while (received.length >= 5 && received.length >= 1 + received.readInt32BE(1)) {
      if (received.toString('latin1', 0, 1) === 'Z') readyForQuery++;
      if (received.toString('latin1', 0, 1) === 'K') pid = received.readInt32BE(5);
      received = received.subarray(1 + received.readInt32BE(1));
    }
  });
  const ready = async (count: number) => {
    while (readyForQuery < count) await pause(10);
  };
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const startup = Buffer.concat([
    cstrings(
      'user',
      decodeURIComponent(target.username),
      'database',
      target.pathname.slice(1) || 'postgres',
      'application_name',
      applicationName,
    ),
    Buffer.from([0]),
  ]);
  const length = Buffer.alloc(8);
  length.writeInt32BE(startup.length + 8, 0);
  length.writeInt32BE(196608, 4);
  socket.write(Buffer.concat([length, startup]));
  await ready(1);
  socket.write(message('Q', cstrings(`begin; select pg_advisory_xact_lock(${lockKey})`)));
  await ready(2);
  socket.write(message('P', Buffer.concat([cstrings('', 'select $1::int'), Buffer.from([0, 0])])));
  if (!pid) throw new Error('PostgreSQL sent no BackendKeyData');
  return { pid, closed, end: () => socket.destroy() };
}

/** Sessions of `applicationName` that are active and waiting on their client. */
const waitingOnClient = async (db: Db, applicationName: string) =>
  rowsOf<{ pid: number }>(
    await db.execute(sql`
      select pid from pg_stat_activity
      where application_name = ${applicationName} and state = 'active' and wait_event = 'ClientRead'`),
  ).map((r) => r.pid);

describe('stalled sessions on the embedded database', () => {
  it('are not looked for: one process, no other node', async () => {
    const database = await openDatabase({ url: 'memory://', migrate: false });
    expect(database.endStalledSessions).toBeUndefined();
    await database.close();
  });
});

describe.skipIf(!url)('a session stalled in the middle of a statement (its node frozen there)', () => {
  it('is ended once seen so for the bound, so its locks stop holding the other nodes', async () => {
    // The watching node with a 1 s bound; the other node with the service's own.
    const watcher = await openDatabase({ url, migrate: false, idleInTransactionTimeoutMs: 1_000 });
    const other = await openDatabase({ url, migrate: false });
    const key = Math.floor(Math.random() * 1e9);
    const stalled = await stallMidStatement('convene', key);
    // Another application's session, stalled the same way: not the service's to end.
    const foreign = await stallMidStatement('psql', key + 1);
    try {
      // Sessions of the same name that other tests' nodes have in the middle of a statement
      // for a moment may be listed beside it: only these two are looked at.
      await expect.poll(() => waitingOnClient(other.db, 'convene')).toContain(stalled.pid);
      expect(await waitingOnClient(other.db, 'psql')).toContain(foreign.pid);
      const started = Date.now();
      const taken = other.db.transaction(async (tx) => {
        await tx.execute(sql`select pg_advisory_xact_lock(${key})`);
        return Date.now() - started;
      });

      // PostgreSQL itself never ends it: it is not idle in its transaction.
      await pause(1_500);
      expect(await waitingOnClient(other.db, 'convene')).toContain(stalled.pid);
      // The first sighting starts the count: nothing is ended yet.
      expect(await watcher.endStalledSessions!()).toEqual([]);
      await pause(1_100);
      const ended = await watcher.endStalledSessions!();
      const mine = ended.filter((session) => session.pid === stalled.pid || session.pid === foreign.pid);
      expect(mine).toEqual([{ pid: stalled.pid, applicationName: 'convene', waitedMs: expect.any(Number) }]);
      expect(mine[0]!.waitedMs).toBeGreaterThanOrEqual(1_000);
      // Its lock held the other session until then, and is let go; its connection is closed.
      const takenMs = await taken;
      expect(takenMs).toBeGreaterThan(2_500);
      expect(takenMs).toBeLessThan(4_000);
      await stalled.closed;
      // A session that came after is not the one seen: nothing more is ended.
      expect(await watcher.endStalledSessions!()).toEqual([]);
      expect(await waitingOnClient(other.db, 'psql')).toContain(foreign.pid);
    } finally {
      stalled.end();
      foreign.end();
      await watcher.close();
      await other.close();
    }
  });
});
