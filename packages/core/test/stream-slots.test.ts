import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Db, rowsOf } from '../src/db';
import {
  claimStreamSlot,
  releaseStreamSlots,
  renewStreamNode,
  retireStreamNode,
  sweepStreamNodes,
  TooManyStreamsError,
} from '../src/events/stream-slots';
import { openTestDatabase, type TestDatabase, testDatabaseServerUrl } from '../src/testing';

const onPostgres = Boolean(testDatabaseServerUrl());

describe('stream slots', () => {
  let t: TestDatabase;
  let db: Db;
  beforeAll(async () => {
    t = await openTestDatabase();
    db = t.database.db;
  });
  afterAll(() => t.close());

  const caps = { perCredential: 2, perAddress: 3 };
  const claim = (nodeId: string, credential: string, address: string, releasing: string[] = []) => {
    const slotId = randomUUID();
    return claimStreamSlot(db, { slotId, nodeId, credential, address, ...caps, releasing }).then(
      () => slotId,
    );
  };
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => 'admitted',
      (error: unknown) => (error instanceof TooManyStreamsError ? error.message : String(error)),
    );
  const slotsOf = async (nodeId: string) =>
    rowsOf(await db.execute(sql`select id from stream_slots where node_id = ${nodeId}`)).length;
  const lapse = (nodeId: string, seconds: number) =>
    db.execute(sql`update stream_nodes set alive_until = now() - make_interval(secs => ${seconds})
      where id = ${nodeId}`);

  it('counts a credential and an address over every live node, and gives slots back', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    await renewStreamNode(db, a);
    await renewStreamNode(db, b);
    const first = await claim(a, 'key-1', 'addr-1');
    await claim(b, 'key-1', 'addr-1');
    expect(await refusal(claim(a, 'key-1', 'addr-2'))).toBe(
      'too many open streams for this key; close one first',
    );
    await claim(b, 'key-2', 'addr-1');
    expect(await refusal(claim(a, 'key-3', 'addr-1'))).toBe(
      'too many open streams for this address; close one first',
    );
    const refused = await claim(a, 'key-3', 'addr-1').catch((error: TooManyStreamsError) => error);
    expect(refused).toMatchObject({ kind: 'RATE_LIMITED', retryAfterSeconds: 5 });

    // A slot its node has given back but not yet deleted no longer counts for that node's claims.
    expect(await refusal(claim(a, 'key-1', 'addr-2', [first]))).toBe('admitted');
    expect(await refusal(claim(a, 'key-1', 'addr-2'))).toMatch(/for this key/);
    await releaseStreamSlots(db, [first]);
    expect(await slotsOf(a)).toBe(1);
  });

  it('does not count the slots of a node whose lease lapsed, until it renews', async () => {
    const [dead, live] = [randomUUID(), randomUUID()];
    await renewStreamNode(db, dead);
    await renewStreamNode(db, live);
    await claim(dead, 'key-4', 'addr-4');
    await claim(dead, 'key-4', 'addr-4');
    expect(await refusal(claim(live, 'key-4', 'addr-4'))).toMatch(/for this key/);
    await lapse(dead, 1);
    // Its own slots still count for the lapsed node itself (a renewal held up behind claims).
    expect(await refusal(claim(dead, 'key-4', 'addr-4'))).toMatch(/for this key/);
    expect(await refusal(claim(live, 'key-4', 'addr-4'))).toBe('admitted');
    // Back (a database outage longer than the lease): its slots count again.
    await renewStreamNode(db, dead);
    expect(await refusal(claim(live, 'key-4', 'addr-5'))).toMatch(/for this key/);
  });

  it('admits exactly the cap when claims race', async () => {
    const node = randomUUID();
    await renewStreamNode(db, node);
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () => refusal(claim(node, 'key-6', 'addr-6'))),
    );
    expect(outcomes.filter((o) => o === 'admitted')).toHaveLength(caps.perCredential);
  });

  it('sweeps long-lapsed nodes with their slots, retires a stopping node, and forgets all on request', async () => {
    const [old, recent, stopping] = [randomUUID(), randomUUID(), randomUUID()];
    for (const node of [old, recent, stopping]) await renewStreamNode(db, node);
    await claim(old, 'key-7', 'addr-7');
    await claim(old, 'key-8', 'addr-8');
    await claim(recent, 'key-9', 'addr-9');
    await claim(stopping, 'key-10', 'addr-10');
    await lapse(old, 601);
    await lapse(recent, 30);
    // A claim that finished after its node retired.
    await db.execute(sql`insert into stream_slots (id, node_id, credential, address, opened_at)
      values (${randomUUID()}, ${randomUUID()}, 'key-11', 'addr-11', now())`);

    expect(await sweepStreamNodes(db, 2)).toBe(2);
    expect(await sweepStreamNodes(db, 1000)).toBe(2); // the last slot, then the node
    expect(rowsOf(await db.execute(sql`select id from stream_slots where credential = 'key-11'`))).toEqual(
      [],
    );
    expect(await slotsOf(old)).toBe(0);
    expect(await slotsOf(recent)).toBe(1);
    const nodes = async () =>
      rowsOf<{ id: string }>(await db.execute(sql`select id from stream_nodes`)).map((r) => r.id);
    expect(await nodes()).not.toContain(old);

    await retireStreamNode(db, stopping);
    expect(await slotsOf(stopping)).toBe(0);
    expect(await nodes()).not.toContain(stopping);
  });

  it.runIf(onPostgres)(
    'waits for a claim in flight on the same credential, and counts what it committed',
    async () => {
      const node = randomUUID();
      await renewStreamNode(db, node);
      let settled: string | undefined;
      let pending: Promise<string> | undefined;
      await db.transaction(async (tx) => {
        // Another node's claim, holding the credential's lock while it takes the last two slots.
        await tx.execute(
          sql`select pg_advisory_xact_lock(hashtextextended('stream-slots:credential:key-12', 0))`,
        );
        for (let i = 0; i < caps.perCredential; i++)
          await tx.execute(sql`insert into stream_slots (id, node_id, credential, address, opened_at)
          values (${randomUUID()}, ${node}, 'key-12', 'addr-12', now())`);
        pending = refusal(claim(node, 'key-12', 'addr-13'));
        void pending.then((outcome) => {
          settled = outcome;
        });
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(settled).toBeUndefined();
      });
      expect(await pending).toMatch(/for this key/);
    },
  );
});
