import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import type { Db } from '../src/db';
import { embeddedClient } from '../src/db/engine';
import { defaultCoreConfig } from '../src/deps';
import type { EventBus } from '../src/events/event-bus';
import type { EventNotice } from '../src/events/notice';
import { leaseStreams } from '../src/events/stream-lease';
import { appendMessage } from '../src/messages/append-messages';
import { seededSpaceId, useSeededDatabase } from './seed';

/** A bus that records what it is told; `inSql` as a NOTIFY bus (true) or one that publishes itself. */
const recordingBus = (inSql: boolean) => {
  const told: string[] = [];
  const bus: EventBus = {
    notifiesInSql: inSql,
    publish: async (_ex, notice) => void told.push(`published ${notice.seq}`),
    committed: (notice: EventNotice) => {
      const data = notice.data as { content: string };
      told.push(
        `committed ${notice.spaceId === seededSpaceId(1) ? 1 : 2} ${notice.kind} ${notice.seq} ${data.content}`,
      );
    },
    subscribe: async () => async () => {},
  };
  return { bus, told };
};

/** Sends `content` as the participant seeded in space `n`. */
const sendAs = (db: Db, bus: EventBus, n: number, content: string) =>
  appendMessage(db, bus, defaultCoreConfig, {
    spaceId: seededSpaceId(n),
    keyHash: `hash-${n}`,
    messageId: randomUUID(),
    type: 'text',
    content,
    mentions: [],
    replyTo: null,
    names: [],
    now: new Date(),
    guard: undefined,
  });

describe("a send's notices", () => {
  const seeded = useSeededDatabase(2);
  const send = (bus: EventBus, n: number, content: string) => sendAs(seeded.db, bus, n, content);

  it("reach this node's listeners once committed, with the message, in each space's order", async () => {
    // The first call's bus is the one a database's sends keep (one batcher per database).
    const { bus, told } = recordingBus(true);
    // Space 1 is listened to (a stream lease); space 2 is not, and is notified to nobody.
    await leaseStreams(seeded.db, [seededSpaceId(1)]);
    await Promise.all([send(bus, 1, 'a'), send(bus, 2, 'x'), send(bus, 1, 'b'), send(bus, 1, 'c')]);
    // Concurrent sends take their places in the order their statements reach the space (the
    // first may wait for its connection while the others commit on another): whichever order
    // that is, each notice carries its message, told in the order of the space's sequence.
    expect(told.map((t) => t.replace(/ [abc]$/, ''))).toEqual([
      'committed 1 message 1',
      'committed 1 message 2',
      'committed 1 message 3',
    ]);
    expect(told.map((t) => t.at(-1)).sort()).toEqual(['a', 'b', 'c']);
  });
});

describe("a send's notices, on a bus that does not notify in SQL", () => {
  const seeded = useSeededDatabase(1);

  it('are published by the sender, then heard here', async () => {
    const { bus, told } = recordingBus(false);
    await leaseStreams(seeded.db, [seededSpaceId(1)]);
    const appended = await sendAs(seeded.db, bus, 1, 'a');
    expect(appended).toMatchObject({ refused: null });
    expect(told).toEqual(['published 1', 'committed 1 message 1 a']);
  });
});

describe('sends on the embedded database', () => {
  const seeded = useSeededDatabase(16);

  it('of one turn of the event loop share one statement, each message in its own space in order', async (ctx) => {
    // PostgreSQL batches what arrives while a statement is out (its round trip); PGlite's
    // statements block this thread, so there the batch is what one turn received.
    const client = embeddedClient(seeded.db);
    if (!client) return ctx.skip();
    const execProtocol = vi.spyOn(client, 'execProtocol');
    const { bus } = recordingBus(true);
    const sends = Array.from({ length: 16 }, (_, i) => sendAs(seeded.db, bus, i + 1, `m${i + 1}`));
    sends.push(sendAs(seeded.db, bus, 1, 'again'));
    const answers = await Promise.all(sends);
    // One Bind of the sending statement (its Parse came first, once) for the 17 messages.
    const binds = (spy: typeof execProtocol) =>
      spy.mock.calls.filter(([message]) => message[0] === 'B'.charCodeAt(0));
    expect(binds(execProtocol)).toHaveLength(1);
    execProtocol.mockRestore();
    expect(answers.map((a) => (a as { seq: number | null }).seq)).toEqual([...Array(16).fill(1), 2]);
    // The next turn's send is a statement of its own.
    const spy = vi.spyOn(client, 'execProtocol');
    await sendAs(seeded.db, bus, 2, 'later');
    expect(binds(spy)).toHaveLength(1);
    spy.mockRestore();
  });
});
