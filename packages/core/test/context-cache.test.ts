import { randomUUID } from 'node:crypto';
import type { TParticipantView } from '@convene/contract';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, type MockInstance, vi } from 'vitest';
import { spaceKeyHash } from '../src/auth/authorize';
import { systemClock } from '../src/clock';
import { type Db, rowsOf } from '../src/db';
import { defaultCoreConfig } from '../src/deps';
import type { EventBus } from '../src/events/event-bus';
import { appendMessage } from '../src/messages/append-messages';
import { openStream } from '../src/messages/open-stream';
import {
  type ChangedParticipant,
  isAssembled,
  jsonPartsWithParticipants,
  jsonWithParticipants,
  ParticipantsCache,
  participantsCacheOf,
  participantsForReply,
  readContext,
} from '../src/spaces/context-cache';
import { loadContext } from '../src/spaces/views';
import { openTestDatabase, type TestDatabase } from '../src/testing';
import { seededSpaceId, seedSpaces } from './seed';

const SPACE = seededSpaceId(1);
const KEY_HASH = 'hash-1';
const config = defaultCoreConfig;

/** A bus that NOTIFYs in SQL, as the PostgreSQL one does; nobody listens here. */
const bus: EventBus = {
  notifiesInSql: true,
  publish: async () => {},
  committed: () => {},
  subscribe: async () => async () => {},
};

/** Sends a message as the participant seeded in space `n`; the participants its reply carries. */
async function send(db: Db, guard?: { scope: string }, n = 1): Promise<readonly TParticipantView[]> {
  const now = new Date();
  const appended = await appendMessage(db, bus, config, {
    spaceId: seededSpaceId(n),
    keyHash: `hash-${n}`,
    messageId: randomUUID(),
    type: 'text',
    content: 'hello',
    mentions: [],
    replyTo: null,
    names: [],
    now,
    guard: guard && {
      scope: guard.scope,
      requestHash: 'request',
      now,
      expiresAt: new Date(now.getTime() + 86_400_000),
    },
  });
  if (!appended || typeof appended === 'string' || appended.refused) throw new Error('not sent');
  return appended.participants;
}

/** `count` more active participants of space `space`, `<prefix><i>`, all created in the same millisecond. */
async function join(db: Db, count: number, prefix: string, space = 1): Promise<void> {
  await db.execute(sql`
    insert into participants (space_id, id, name, status, key_hash, created_at, updated_at)
    select ${seededSpaceId(space)}::uuid, gen_random_uuid(), ${prefix} || n, 'active', null, now(), now()
    from generate_series(1, ${count}) as n`);
}

const everyone = async (db: Db, space = 1) =>
  (await loadContext(db, systemClock, config, seededSpaceId(space))).participants;
const idOf = async (db: Db, name: string) =>
  rowsOf<{ id: string }>(await db.execute(sql`select id from participants where name = ${name}`))[0]!.id;

describe("a send's participants, read since the last send", () => {
  let t: TestDatabase;
  let db: Db;
  let advance: MockInstance<ParticipantsCache['advance']>;
  /** How many participants the last send read from the database. */
  const lastRead = () => (advance.mock.lastCall![3] as ChangedParticipant[]).length;

  beforeAll(async () => {
    t = await openTestDatabase();
    db = t.database.db;
    await seedSpaces(db, 1);
    await join(db, 40, 'listener-');
    advance = vi.spyOn(ParticipantsCache.prototype, 'advance');
  });
  afterEach(() => advance.mockClear());
  afterAll(() => t.close());

  it('are every participant, in order, and then only the ones changed are read again', async () => {
    expect(await send(db)).toEqual(await everyone(db));
    expect(lastRead()).toBe(41);

    expect(await send(db)).toEqual(await everyone(db));
    expect(lastRead()).toBe(0);

    // Presence, the inbox position, a mute, and newcomers created in the same millisecond as others.
    await db.execute(sql`update participants set last_seen_at = now() where name = 'listener-3'`);
    await db.execute(sql`update participants set last_read_seq = 7 where name = 'listener-9'`);
    await db.execute(sql`update participants set status = 'muted' where name = 'listener-20'`);
    await join(db, 3, 'late-');
    const participants = await send(db);
    expect(participants).toEqual(await everyone(db));
    expect(lastRead()).toBe(6);
    expect(participants.find((p) => p.name === 'listener-20')?.status).toBe('muted');
    expect(participants.find((p) => p.name === 'listener-9')?.lastReadSeq).toBe(7);
    expect(participants).toHaveLength(44);

    // An update that changes nothing is no change.
    await db.execute(sql`update participants set status = status where name = 'listener-1'`);
    expect(await send(db)).toEqual(await everyone(db));
    expect(lastRead()).toBe(0);
  });

  it('reads every participant where a guarded send records its answer', async () => {
    await send(db);
    // The process asks from its cached snapshot as for any send: the statement reads them all.
    const scope = `scope-${randomUUID()}`;
    expect(await send(db, { scope })).toEqual(await everyone(db));
    expect(lastRead()).toBe(44);
    const [record] = rowsOf<{ participants: number }>(
      await db.execute(
        sql`select json_array_length((outcome->'participants')::json) as participants from idempotency_records where scope = ${scope}`,
      ),
    );
    expect(Number(record!.participants)).toBe(44);
  });

  it('open streams from the same participants, read since the last send', async () => {
    await send(db);
    const key = 'a'.repeat(64);
    const hash = spaceKeyHash(SPACE, key);
    await db.execute(sql`update participants set key_hash = ${hash} where key_hash = ${KEY_HASH}`);
    await db.execute(sql`update participants set role = 'reads' where name = 'listener-12'`);
    try {
      const deps = { db, clock: systemClock, config } as Parameters<typeof openStream>[0]['deps'];
      const start = await openStream({ deps, spaceId: SPACE, key });
      // The two rows changed: the key's participant and the role.
      expect(lastRead()).toBe(2);
      expect(start.context.participants).toEqual(await everyone(db));
      expect(start.context.participants.find((p) => p.name === 'listener-12')?.role).toBe('reads');
    } finally {
      await db.execute(sql`update participants set key_hash = ${KEY_HASH} where key_hash = ${hash}`);
    }
  });

  it("reads a stream's later contexts the same way", async () => {
    await send(db);
    await db.execute(sql`update participants set status = 'kicked' where name = 'listener-30'`);
    const context = await readContext(db, systemClock, config, SPACE);
    expect(lastRead()).toBe(1);
    expect(context).toEqual(await loadContext(db, systemClock, config, SPACE));
    expect(context?.participants.find((p) => p.name === 'listener-30')?.status).toBe('kicked');
    expect(await readContext(db, systemClock, config, randomUUID())).toBeUndefined();
  });

  it('reads every participant again when the database server has restarted since the last read', async () => {
    await send(db);
    const cache = participantsCacheOf(db);
    const entry = cache.get(SPACE)!;
    expect(entry.snapshot).toMatch(/^\d+:\d+:[\d,]*@[\d.]+$/);
    // The same snapshot, as taken by an earlier run of the server.
    cache.advance(config, SPACE, entry, [], entry.snapshot.replace(/@.*/, '@1'));
    expect(await send(db)).toEqual(await everyone(db));
    expect(lastRead()).toBe((await everyone(db)).length);
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'never misses a change that was still uncommitted when the last send read',
    async () => {
      await send(db);
      const id = await idOf(db, 'listener-5');
      let during: readonly TParticipantView[] = [];
      await db.transaction(async (tx) => {
        await tx.execute(sql`update participants set name = 'renamed' where id = ${id}`);
        // A later transaction commits meanwhile: the one in progress is older than what is seen.
        await db.execute(sql`update participants set last_read_seq = 1 where name = 'listener-6'`);
        // Another connection: the change is in progress, invisible to this send.
        during = await send(db);
      });
      expect(during.find((p) => p.participantId === id)?.name).toBe('listener-5');
      const after = await send(db);
      expect(after.find((p) => p.participantId === id)?.name).toBe('renamed');
      expect(after).toEqual(await everyone(db));
    },
  );
});

describe('sends batched into one statement', () => {
  let t: TestDatabase;
  let db: Db;
  let advance: MockInstance<ParticipantsCache['advance']>;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  beforeAll(async () => {
    t = await openTestDatabase();
    db = t.database.db;
    await seedSpaces(db, 3);
    await join(db, 12, 'a-', 1);
    await join(db, 7, 'b-', 2);
    advance = vi.spyOn(ParticipantsCache.prototype, 'advance');
  });
  afterEach(() => advance.mockClear());
  afterAll(() => t.close());

  it("read each space's participants from where this process has them: since its snapshot, or all", async () => {
    await send(db, undefined, 1);
    await db.execute(sql`update participants set role = 'edits' where name = 'a-4'`);
    await db.execute(sql`update participants set role = 'reviews' where name = 'b-2'`);
    advance.mockClear();
    // The first send goes out alone; the two behind it queue into the next statement.
    const [, one, two] = await Promise.all([
      send(db, undefined, 3),
      send(db, undefined, 1),
      send(db, undefined, 2),
    ]);
    expect(one).toEqual(await everyone(db, 1));
    expect(two).toEqual(await everyone(db, 2));
    expect(one.find((p) => p.name === 'a-4')?.role).toBe('edits');
    expect(two.find((p) => p.name === 'b-2')?.role).toBe('reviews');
    const readOf = (space: number) => advance.mock.calls.find((call) => call[1] === seededSpaceId(space))!;
    const [read1, read2] = [readOf(1), readOf(2)];
    // One statement (one snapshot): space 1 from its cached snapshot, space 2 whole.
    expect(read1[4]).toBe(read2[4]);
    expect(read1[2]).toBeDefined();
    expect(read1[3].map((p) => p.name)).toEqual(['a-4']);
    expect(read2[2]).toBeUndefined();
    expect(read2[3]).toHaveLength(8);
  });

  /** Until `count` statements of this database wait for a lock (the held space row). */
  async function waitingOnLocks(count: number): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const result = await db.execute(
        sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      );
      if (Number(rowsOf<{ n: number }>(result)[0]?.n) >= count) return;
      if (Date.now() > deadline) throw new Error(`${count} statements never waited for the space row`);
      await sleep(10);
    }
  }

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'in flight together from the same cached participants, each answers what it saw, and the next send the rest',
    async () => {
      await send(db, undefined, 1);
      const id = await idOf(db, 'a-5');
      const sends: Promise<readonly TParticipantView[]>[] = [];
      await db.transaction(async (tx) => {
        await tx.execute(sql`update participants set name = 'renamed' where id = ${id}`);
        // The space's row is held, so the sends wait inside their statements.
        await tx.execute(sql`select id from spaces where id = ${seededSpaceId(1)} for update`);
        sends.push(send(db, undefined, 1));
        // Past STALLED_MS: the second statement goes out beside the first, from the same entry.
        await sleep(60);
        await waitingOnLocks(1);
        sends.push(send(db, undefined, 1));
        // Both statements are in the database before the rename commits, however loaded the
        // machine (a fixed pause was not always enough: CI saw the second start after it).
        await waitingOnLocks(2);
      });
      const answers = await Promise.all(sends);
      const bases = advance.mock.calls.filter((call) => call[1] === seededSpaceId(1)).map((call) => call[2]);
      expect(bases.slice(-2)[0]).toBe(bases.slice(-2)[1]);
      // Both statements started before the rename committed.
      for (const answer of answers) expect(answer.find((p) => p.participantId === id)?.name).toBe('a-5');
      const after = await send(db, undefined, 1);
      expect(after.find((p) => p.participantId === id)?.name).toBe('renamed');
      expect(after).toEqual(await everyone(db, 1));
    },
  );
});

describe('streams opening together in a space this process holds nothing of', () => {
  let t: TestDatabase;
  let db: Db;
  let advance: MockInstance<ParticipantsCache['advance']>;
  const keys = ['b'.repeat(64), 'd'.repeat(64)];
  const key = keys[0]!;
  const deps = () => ({ db, clock: systemClock, config }) as Parameters<typeof openStream>[0]['deps'];
  /** How many participants each read of the space brought, in the order they came back. */
  const reads = (spaceId: string) =>
    advance.mock.calls
      .filter((call) => call[1] === spaceId)
      .map((call) => (call[3] as ChangedParticipant[]).length);

  beforeAll(async () => {
    t = await openTestDatabase();
    db = t.database.db;
    await seedSpaces(db, 2);
    await join(db, 40, 'listener-', 1);
    await join(db, 40, 'listener-', 2);
    for (const n of [1, 2])
      await db.execute(
        sql`update participants set key_hash = ${spaceKeyHash(seededSpaceId(n), keys[n - 1]!)} where key_hash = ${`hash-${n}`}`,
      );
    advance = vi.spyOn(ParticipantsCache.prototype, 'advance');
  });
  afterEach(() => advance.mockClear());
  afterAll(() => t.close());

  it('read every participant once: the others start from what that read brought', async () => {
    const starts = await Promise.all(
      Array.from({ length: 8 }, () => openStream({ deps: deps(), spaceId: SPACE, key })),
    );
    expect(reads(SPACE)).toEqual([41, 0, 0, 0, 0, 0, 0, 0]);
    const all = await everyone(db);
    for (const start of starts) expect(start.context.participants).toEqual(all);
  });

  it('start from a read refused to its own caller: the rows it read are the space’s all the same', async () => {
    const space = seededSpaceId(2);
    const opens = [
      openStream({ deps: deps(), spaceId: space, key: 'c'.repeat(64) }),
      ...Array.from({ length: 3 }, () => openStream({ deps: deps(), spaceId: space, key: keys[1] })),
    ];
    const [refused, ...started] = await Promise.allSettled(opens);
    expect(refused?.status).toBe('rejected');
    expect(started.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(reads(space)).toEqual([41, 0, 0, 0]);
  });

  it('go on each with its own read when the first finds no space', async () => {
    const missing = randomUUID();
    const opens = await Promise.allSettled(
      Array.from({ length: 3 }, () => openStream({ deps: deps(), spaceId: missing, key })),
    );
    expect(opens.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(participantsCacheOf(db).get(missing)).toBeUndefined();
  });
});

describe('ParticipantsCache', () => {
  const row = (id: string, created: number): ChangedParticipant => ({
    id,
    name: id,
    role: '',
    status: 'active',
    isOwner: false,
    isHuman: false,
    lastSeenAt: null,
    lastReadSeq: 0,
    created,
  });
  const ids = (views: readonly TParticipantView[]) => views.map((v) => v.participantId);

  it('has the reads of a space it holds nothing of wait for the first, at most a while', async () => {
    const cache = new ParticipantsCache(100, 50);
    const first = await cache.startRead('s');
    expect(first.base).toBeUndefined();
    // Waiting on the first: it finishes with the space cached.
    const waiting = cache.startRead('s');
    const entry = cache.advance(config, 's', undefined, [row('a', 1)], 'S1');
    first.finish();
    expect((await waiting).base).toBe(entry);
    // Cached: no wait at all.
    expect((await cache.startRead('s')).base).toBe(entry);

    // A first read that never finishes holds the others back no longer than the wait.
    const stuck = await cache.startRead('t');
    const started = performance.now();
    const late = await cache.startRead('t');
    expect(late.base).toBeUndefined();
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    stuck.finish();
    // Over: the next read is a first one again, and nobody waits on it yet.
    const again = await cache.startRead('t');
    expect(again.base).toBeUndefined();
    again.finish();
  });

  it('keeps the order of creation, then id, as participants join', () => {
    const cache = new ParticipantsCache();
    const first = cache.advance(config, 's', undefined, [row('b', 1), row('c', 2)], 'S1');
    const next = cache.advance(config, 's', first, [row('a', 2), row('d', 0.5)], 'S2');
    expect(ids(next.views)).toEqual(['d', 'b', 'a', 'c']);
    expect(ids(first.views)).toEqual(['b', 'c']);
  });

  it('replaces an entry only from the entry it holds, and forgets the oldest spaces beyond its bound', () => {
    const cache = new ParticipantsCache(4);
    const base = cache.advance(config, 'a', undefined, [row('a1', 1), row('a2', 2)], 'A1');
    const newer = cache.advance(config, 'a', base, [row('a3', 3)], 'A2');
    // A read that started from the same entry and came back later does not undo the newer one.
    cache.advance(config, 'a', base, [], 'A3');
    expect(cache.get('a')).toBe(newer);
    cache.advance(config, 'b', undefined, [row('b1', 1), row('b2', 2)], 'B1');
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')?.snapshot).toBe('B1');
  });

  it("assembles a reply's JSON from each participant's, the same JSON as serialising it whole", () => {
    const cache = new ParticipantsCache();
    const tricky = ['"participants":[]', '$& $1 $$', 'Zoë 🦊 \\ "quoted"'];
    const at = cache.advance(
      config,
      's',
      undefined,
      tricky.map((name, i) => ({ ...row(`p${i}`, i), name })),
      'S1',
    );
    const participants = participantsForReply(at.views);
    expect(isAssembled(participants)).toBe(true);
    const reply = { messageId: '"participants":[]', mentions: [], participants, artifacts: [], n: 1 };
    const json = jsonWithParticipants(reply).toString();
    expect(JSON.parse(json)).toEqual(JSON.parse(JSON.stringify(reply)));
    expect(json.length).toBe(JSON.stringify(reply).length);
    // Twice: every answer from the same read shares its participants' JSON.
    expect(jsonWithParticipants(reply).toString()).toBe(json);
    expect(participantsForReply(at.views)).toBe(participants);
    const another = { ...reply, n: 2 };
    expect(jsonPartsWithParticipants(another)[1]).toBe(jsonPartsWithParticipants(reply)[1]);
    // Any other array is serialised as it is.
    expect(isAssembled([...at.views])).toBe(false);
    expect(jsonWithParticipants({ participants: [...at.views] }).toString()).toBe(
      JSON.stringify({ participants: at.views }),
    );
  });

  it('keeps the views that a read in flight beside this one already brought, when equal', () => {
    const cache = new ParticipantsCache();
    const base = cache.advance(config, 's', undefined, [row('a', 1), row('b', 2), row('c', 3)], 'S1');
    const seen = (r: ChangedParticipant) => ({ ...r, lastSeenAt: '2026-01-01T00:00:00Z' });
    // Two reads started from `base`; the one finishing first saw a and b change, and d join.
    const first = cache.advance(config, 's', base, [seen(row('a', 1)), seen(row('b', 2)), row('d', 4)], 'S2');
    // The later one also saw b change again and c change.
    const later = [
      seen(row('a', 1)),
      { ...seen(row('b', 2)), lastReadSeq: 7 },
      seen(row('c', 3)),
      row('d', 4),
    ];
    const second = cache.advance(config, 's', base, later, 'S3');
    expect(ids(second.views)).toEqual(['a', 'b', 'c', 'd']);
    expect(second.views[0]).toBe(first.views[0]);
    expect(second.views[3]).toBe(first.views[3]);
    expect(second.views[1]).not.toBe(first.views[1]);
    expect(second.views[1]!.lastReadSeq).toBe(7);
    expect(second.views[2]!.lastSeenAt).toBe('2026-01-01T00:00:00.000Z');
    expect(second.views[2]).not.toBe(base.views[2]);
  });

  it('shares the pieces of JSON whose participants did not change with the reads before', () => {
    const cache = new ParticipantsCache();
    const pad = (i: number) => `p${String(i).padStart(4, '0')}`;
    const all = Array.from({ length: 200 }, (_, i) => row(pad(i), i));
    const first = cache.advance(config, 's', undefined, all, 'S1');
    const partsOf = (views: readonly TParticipantView[]) => {
      const reply = { participants: participantsForReply(views), n: 1 };
      return jsonPartsWithParticipants(reply);
    };
    const before = partsOf(first.views);
    // One participant seen again (the 150th of 200), then one more joining.
    const seen = cache.advance(
      config,
      's',
      first,
      [{ ...all[150]!, lastSeenAt: '2026-01-01T00:00:00Z' }],
      'S2',
    );
    const after = partsOf(seen.views);
    expect(after.length).toBe(before.length);
    const changed = after.flatMap((part, i) => (part === before[i] ? [] : [i]));
    // The head and tail of the reply are its own; of the participants, only the piece holding the
    // changed one is new.
    expect(changed).toEqual([0, 3, after.length - 1]);
    const whole = (parts: Buffer[]) => JSON.parse(Buffer.concat(parts).toString());
    expect(whole(after)).toEqual({ participants: seen.views, n: 1 });
    expect(whole(after).participants[150].lastSeenAt).toBe('2026-01-01T00:00:00.000Z');

    const joined = cache.advance(config, 's', seen, [row('p9999', 1000)], 'S3');
    const more = partsOf(joined.views);
    for (let i = 1; i <= 3; i++) expect(more[i]).toBe(after[i]);
    expect(more[4]).not.toBe(after[4]);
    expect(Buffer.concat(more).toString()).toBe(JSON.stringify({ participants: joined.views, n: 1 }));
    // The first read's JSON is unchanged by the later ones.
    expect(Buffer.concat(partsOf(first.views)).toString()).toBe(
      JSON.stringify({ participants: first.views, n: 1 }),
    );
    expect(Buffer.concat(partsOf([])).toString()).toBe('{"participants":[],"n":1}');
  });
});
