import { randomUUID } from 'node:crypto';
import {
  hashSecret,
  IdempotencyBusyError,
  type IdempotencyGuard,
  isLiveCredential,
  LIVE_FOR_MS,
  MemoryRateLimiter,
  type RateLimitClient,
  type RateLimiter,
  type RateLimitOptions,
  rowsOf,
  Sealer,
  SecretBox,
  SqlIdempotencyStore,
  SqlRateLimiter,
} from '@convene/core';
import { openTestDatabase, type TestDatabase, testDatabaseServerUrl } from '@convene/core/testing';
import { type SQL, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The storage ports of the HTTP policies, on this run's database (PGlite, or PostgreSQL with
// TEST_DATABASE_URL) and in memory.
let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await openTestDatabase();
});
afterAll(() => tdb?.close());

const T0 = new Date('2030-01-01T00:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
let unique = 0;
const fresh = (label: string) => `${label}-${++unique}-${Math.random().toString(36).slice(2)}`;

/**
 * What `during` returns while another transaction holds the rows `lock` selects (FOR UPDATE), as
 * another node's would; 'waited' if it was still waiting for them after 5 s. Then lets them go.
 */
async function whileHeld<T>(lock: SQL, during: () => Promise<T>): Promise<T | 'waited'> {
  let release!: () => void;
  const releasing = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const holding = new Promise<void>((resolve) => (locked = resolve));
  const other = tdb.database.db.transaction(async (tx) => {
    await tx.execute(lock);
    locked();
    await releasing;
  });
  await holding;
  const waited = new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 5_000));
  try {
    return await Promise.race([during(), waited]);
  } finally {
    release();
    await other;
  }
}

const limiters: [string, (o: RateLimitOptions) => RateLimiter][] = [
  ['SqlRateLimiter', (o) => new SqlRateLimiter(tdb.database.db, o)],
  [
    'MemoryRateLimiter',
    (o) =>
      new MemoryRateLimiter(o, (kind, lookup, now) => isLiveCredential(tdb.database.db, kind, lookup, now)),
  ],
];

/** A space (open until `expiresAt`) with one participant of `status` whose key is `key`. */
async function storedKey(key: string, status: string, expiresAt = at(3_600_000)) {
  const spaceId = randomUUID();
  const created = at(0).toISOString();
  await tdb.database.db.execute(sql`
    insert into spaces (id, name, description, privacy, ttl_seconds, created_at, expires_at)
    values (${spaceId}, 's', 'd', 'public', 3600, ${created}, ${expiresAt.toISOString()})`);
  await tdb.database.db.execute(sql`
    insert into participants (space_id, id, name, status, key_hash, created_at, updated_at)
    values (${spaceId}, ${randomUUID()}, 'p', ${status}, ${hashSecret(key)}, ${created}, ${created})`);
  return spaceId;
}

describe.each(limiters)('%s', (name, make) => {
  it('counts requests in a fixed window that opens at the first request', async () => {
    const limiter = make({ max: 3, windowSeconds: 60 });
    const client = fresh('client');
    const first = await limiter.consume(client, at(0));
    expect(first).toEqual({ allowed: true, limit: 3, remaining: 2, resetAt: at(60_000) });
    expect(await limiter.consume(client, at(10_000))).toMatchObject({ allowed: true, remaining: 1 });
    expect(await limiter.consume(client, at(20_000))).toMatchObject({ allowed: true, remaining: 0 });
    const over = await limiter.consume(client, at(59_999));
    expect(over).toEqual({ allowed: false, limit: 3, remaining: 0, resetAt: at(60_000) });
    // The window ends: the next request opens a new one at 1.
    const next = await limiter.consume(client, at(60_000));
    expect(next).toEqual({ allowed: true, limit: 3, remaining: 2, resetAt: at(120_000) });
  });

  it('keeps clients apart', async () => {
    const limiter = make({ max: 1, windowSeconds: 60 });
    const a = fresh('a');
    const b = fresh('b');
    expect((await limiter.consume(a, at(0))).allowed).toBe(true);
    expect((await limiter.consume(a, at(1))).allowed).toBe(false);
    expect((await limiter.consume(b, at(2))).allowed).toBe(true);
  });

  it('counts concurrent requests exactly', async () => {
    const limiter = make({ max: 25, windowSeconds: 60 });
    const client = fresh('burst');
    const decisions = await Promise.all(Array.from({ length: 40 }, () => limiter.consume(client, at(5))));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(25);
    expect(new Set(decisions.filter((d) => d.allowed).map((d) => d.remaining)).size).toBe(25);
  });

  it('counts concurrent requests of many clients exactly, each on its own', async () => {
    const limiter = make({ max: 7, windowSeconds: 60 });
    const clients = Array.from({ length: 6 }, (_, i) => fresh(`many-${i}`));
    const requests = clients.flatMap((client, i) => Array.from({ length: 5 + i }, () => client));
    const decisions = await Promise.all(requests.map((client) => limiter.consume(client, at(5))));
    clients.forEach((client, i) => {
      const mine = decisions.filter((_, j) => requests[j] === client);
      expect(mine.filter((d) => d.allowed)).toHaveLength(Math.min(5 + i, 7));
      expect(mine.map((d) => d.remaining).sort((a, b) => b - a)).toEqual(
        Array.from({ length: 5 + i }, (_, k) => Math.max(7 - 1 - k, 0)),
      );
    });
  });

  it('sweeps only counters whose window has ended', async () => {
    const limiter = make({ max: 5, windowSeconds: 10 });
    const old = fresh('old');
    const live = fresh('live');
    await limiter.consume(old, at(0));
    await limiter.consume(live, at(9_000));
    const swept = await limiter.sweep(at(15_000));
    expect(swept).toBeGreaterThanOrEqual(1);
    // `live` kept its count; `old` starts over.
    expect((await limiter.consume(live, at(15_000))).remaining).toBe(3);
    expect((await limiter.consume(old, at(15_000))).remaining).toBe(4);
  });

  it.runIf(name === 'SqlRateLimiter' && Boolean(testDatabaseServerUrl()))(
    'sweeps around a counter another transaction holds (another node sweeping), without waiting for it',
    async () => {
      const limiter = make({ max: 5, windowSeconds: 10 });
      await limiter.consume(fresh('a'), at(0));
      await limiter.consume(fresh('b'), at(0));
      const swept = await whileHeld(
        sql`select 1 from rate_limits where expire < ${at(15_000).toISOString()}::timestamptz limit 1 for update`,
        () => limiter.sweep(at(15_000)),
      );
      expect(swept).toBeGreaterThanOrEqual(1);
      // The counter it held goes at the next turn.
      expect(await limiter.sweep(at(15_000))).toBeGreaterThanOrEqual(1);
    },
  );
});

describe.each(limiters)('%s with credentials to check', (_name, make) => {
  const client = (key: string, address: string): RateLimitClient => ({
    address,
    credential: { kind: 'space-key', lookup: hashSecret(key), bucket: `bucket-${key}` },
  });

  it('counts a live credential apart, and an unknown or dead one against the address', async () => {
    const limiter = make({ max: 2, windowSeconds: 60 });
    const live = fresh('live-key');
    const kicked = fresh('kicked-key');
    const expired = fresh('expired-key');
    await storedKey(live, 'active');
    await storedKey(kicked, 'kicked');
    await storedKey(expired, 'active', at(1));
    const address = fresh('address');
    expect(await limiter.consume(client(live, address), at(5))).toMatchObject({
      allowed: true,
      remaining: 1,
      bucket: `bucket-${live}`,
    });
    const [a, b, c] = await Promise.all([
      limiter.consume(client(fresh('unknown'), address), at(5)),
      limiter.consume(client(kicked, address), at(5)),
      limiter.consume(client(expired, address), at(5)),
    ]);
    expect([a, b, c].map((d) => d.bucket)).toEqual([address, address, address]);
    expect([a, b, c].filter((d) => d.allowed)).toHaveLength(2);
    expect((await limiter.consume(client(live, address), at(6))).remaining).toBe(0);
    expect(
      await limiter.consume({ address, credential: { kind: 'verified', bucket: 'signed' } }, at(6)),
    ).toMatchObject({ allowed: true, bucket: 'signed' });
  });
});

describe('MemoryRateLimiter credential lookups', () => {
  it('looks a live credential up once per LIVE_FOR_MS, and a dead one on every request', async () => {
    const lookups: string[] = [];
    const limiter = new MemoryRateLimiter({ max: 100, windowSeconds: 60 }, async (kind, lookup, now) => {
      lookups.push(lookup);
      return isLiveCredential(tdb.database.db, kind, lookup, now);
    });
    const live = fresh('cached-key');
    await storedKey(live, 'active');
    const address = fresh('address');
    const as = (key: string) => ({
      address,
      credential: { kind: 'space-key' as const, lookup: hashSecret(key), bucket: `bucket-${key}` },
    });
    for (let i = 0; i < 5; i++)
      expect((await limiter.consume(as(live), at(i))).bucket).toBe(`bucket-${live}`);
    expect(lookups).toEqual([hashSecret(live)]);
    // After LIVE_FOR_MS it is looked up again (and found live again).
    await limiter.consume(as(live), at(LIVE_FOR_MS));
    expect(lookups).toHaveLength(2);
    const unknown = fresh('unknown-key');
    for (let i = 0; i < 3; i++) expect((await limiter.consume(as(unknown), at(i))).bucket).toBe(address);
    expect(lookups.filter((l) => l === hashSecret(unknown))).toHaveLength(3);
  });
});

describe('SqlRateLimiter storage', () => {
  it('is one row per client, keyed by what it is given', async () => {
    const limiter = new SqlRateLimiter(tdb.database.db, { max: 5, windowSeconds: 60 });
    const client = fresh('row');
    await limiter.consume(client, at(0));
    await limiter.consume(client, at(1));
    const rows = rowsOf<{ points: number }>(
      await tdb.database.db.execute(sql`select points from rate_limits where key = ${client}`),
    );
    expect(rows).toEqual([{ points: 2 }]);
  });
});

describe('SqlIdempotencyStore', () => {
  const make = () =>
    new SqlIdempotencyStore(tdb.database.db, new Sealer(new SecretBox('test-secret-0123456789')));
  const response = { status: 201, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' };
  const guard = (scope: string, requestHash = 'h', now = at(0), ttlMs = 86_400_000): IdempotencyGuard => ({
    scope,
    requestHash,
    now,
    expiresAt: new Date(now.getTime() + ttlMs),
  });
  const db = () => tdb.database.db;

  it('commits a record with the write that claimed it, and nothing when that write fails', async () => {
    const store = make();
    const scope = fresh('scope');
    await expect(
      db().transaction(async (tx) => {
        expect(await store.claim(tx, guard(scope), 1000)).toBeUndefined();
        await store.complete(tx, scope, response);
        throw new Error('the write failed');
      }),
    ).rejects.toThrow('the write failed');
    expect(await store.get(scope, at(1))).toBeUndefined();
    await db().transaction(async (tx) => {
      expect(await store.claim(tx, guard(scope), 1000)).toBeUndefined();
      await store.complete(tx, scope, response);
    });
    expect(await store.get(scope, at(1))).toEqual({ requestHash: 'h', response });
  });

  it('hands a live record to a later claim instead of the scope, until it expires', async () => {
    const store = make();
    const scope = fresh('scope');
    await db().transaction(async (tx) => {
      await store.claim(tx, guard(scope), 1000);
      await store.complete(tx, scope, response);
    });
    const later = await db().transaction((tx) => store.claim(tx, guard(scope, 'h', at(86_399_999)), 1000));
    expect(later).toEqual({ requestHash: 'h', response });
    // Expired: invisible, and a new claim takes the record over.
    expect(await store.get(scope, at(86_400_000))).toBeUndefined();
    await db().transaction(async (tx) => {
      expect(await store.claim(tx, guard(scope, 'h2', at(86_400_000)), 1000)).toBeUndefined();
      await store.complete(tx, scope, { ...response, status: 200 });
    });
    expect(await store.get(scope, at(86_400_001))).toEqual({
      requestHash: 'h2',
      response: { ...response, status: 200 },
    });
  });

  it.runIf(Boolean(testDatabaseServerUrl()))(
    'makes a claim wait for a concurrent one: a replay when it commits, the scope when it fails, 409 past the wait',
    async () => {
      const store = make();
      for (const fate of ['commit', 'fail'] as const) {
        const scope = fresh('scope');
        let hold!: () => void;
        const held = new Promise<void>((resolve) => (hold = resolve));
        let claimed!: () => void;
        const firstClaimed = new Promise<void>((resolve) => (claimed = resolve));
        const first = db()
          .transaction(async (tx) => {
            await store.claim(tx, guard(scope), 1000);
            await store.complete(tx, scope, response);
            claimed();
            await held;
            if (fate === 'fail') throw new Error('failed');
          })
          .catch(() => 'failed');
        await firstClaimed;
        const second = db().transaction(async (tx) => store.claim(tx, guard(scope), 5000));
        await new Promise((resolve) => setTimeout(resolve, 100));
        hold();
        await first;
        expect(await second).toEqual(fate === 'commit' ? { requestHash: 'h', response } : undefined);
      }
      const scope = fresh('scope');
      let hold!: () => void;
      const held = new Promise<void>((resolve) => (hold = resolve));
      let claimed!: () => void;
      const firstClaimed = new Promise<void>((resolve) => (claimed = resolve));
      const first = db().transaction(async (tx) => {
        await store.claim(tx, guard(scope), 1000);
        claimed();
        await held;
      });
      await firstClaimed;
      const started = Date.now();
      await expect(db().transaction((tx) => store.claim(tx, guard(scope), 300))).rejects.toBeInstanceOf(
        IdempotencyBusyError,
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
      hold();
      await first;
    },
  );

  it('keeps a refusal unless a record exists', async () => {
    const store = make();
    const scope = fresh('scope');
    expect(await store.recordRefusal(guard(scope), { ...response, status: 423 })).toBeUndefined();
    // The record already there is returned: its answer is the one to give.
    expect(await store.recordRefusal(guard(scope, 'h2'), { ...response, status: 409 })).toEqual({
      requestHash: 'h',
      response: { ...response, status: 423 },
    });
    expect(await store.get(scope, at(1))).toEqual({
      requestHash: 'h',
      response: { ...response, status: 423 },
    });
  });

  it.runIf(Boolean(testDatabaseServerUrl()))(
    'sweeps around a record another transaction holds (another node sweeping), without waiting for it',
    async () => {
      const store = make();
      const held = fresh('held');
      const free = fresh('free');
      await store.recordRefusal(guard(held, 'h', at(0), 1_000), response);
      await store.recordRefusal(guard(free, 'h', at(0), 1_000), response);
      const swept = await whileHeld(
        sql`select 1 from idempotency_records where scope = ${held} for update`,
        () => store.sweep(at(5_000)),
      );
      expect(swept).toBeGreaterThanOrEqual(1);
      expect(await store.get(free, at(0))).toBeUndefined();
      expect(await store.get(held, at(0))).toEqual({ requestHash: 'h', response });
      expect(await store.sweep(at(5_000))).toBeGreaterThanOrEqual(1);
      expect(await store.get(held, at(0))).toBeUndefined();
    },
  );

  it('sweeps expired records only', async () => {
    const store = make();
    const old = fresh('old');
    const live = fresh('live');
    await store.recordRefusal(guard(old, 'h', at(0), 1_000), response);
    await store.recordRefusal(guard(live, 'h', at(0), 10_000), response);
    expect(await store.sweep(at(5_000))).toBeGreaterThanOrEqual(1);
    expect(await store.get(live, at(5_000))).toEqual({ requestHash: 'h', response });
    // Even read at an earlier instant, the swept record is gone.
    expect(await store.get(old, at(0))).toBeUndefined();
  });
});
