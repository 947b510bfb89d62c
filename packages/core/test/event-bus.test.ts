import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { defaultCoreConfig } from '../src/deps';
import { createNotifyBus, type EventBus } from '../src/events/event-bus';
import type { EventNotice } from '../src/events/notice';
import { leaseStreams } from '../src/events/stream-lease';
import { type Appended, appendMessage } from '../src/messages/append-messages';
import { seededSpaceId, useSeededDatabase } from './seed';

/** Sends `content` as the participant seeded in space `n`. */
const send = (db: Parameters<typeof appendMessage>[0], bus: EventBus, n: number, content: string) =>
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
  }) as Promise<Appended>;

/**
 * The LISTEN/NOTIFY bus over a database whose LISTEN hears nothing: whatever a listener hears
 * is what the node handed it itself.
 */
const deafBus = () =>
  createNotifyBus({
    listen: async () => async () => {},
  });

describe('the notice bus', () => {
  const seeded = useSeededDatabase(2);

  it('hands this node its own messages as they commit, before the bus brings them back', async () => {
    const bus = deafBus();
    const heard: EventNotice[] = [];
    const stop = await bus.subscribe({ notice: (notice) => heard.push(notice), resync: () => {} });
    // Space 1 is streamed (its messages notify), space 2 is not.
    await leaseStreams(seeded.db, [seededSpaceId(1)]);

    const appended = await send(seeded.db, bus, 1, 'heard at once');
    expect(heard).toEqual([
      {
        spaceId: seededSpaceId(1),
        seq: Number(appended.event_seq),
        kind: 'message',
        data: expect.objectContaining({ content: 'heard at once', senderName: 'p1', type: 'text' }),
      },
    ]);

    // Nobody listens to space 2: nothing is notified, nothing heard.
    await send(seeded.db, bus, 2, 'unheard');
    expect(heard).toHaveLength(1);

    // A listener that stopped hears nothing more.
    await stop();
    await send(seeded.db, bus, 1, 'after stopping');
    expect(heard).toHaveLength(1);
  });
});

// A database's sends are batched with the bus of its first send: this one has a database of its own.
describe('a notice bus that does not notify in SQL', () => {
  const seeded = useSeededDatabase(1);

  it('is published to after commit, and hands this node the same notice', async () => {
    const published: EventNotice[] = [];
    const heard: EventNotice[] = [];
    const bus: EventBus = {
      notifiesInSql: false,
      publish: async (_ex, notice) => void published.push(notice),
      heardHere: (notice) => void heard.push(notice),
      subscribe: async () => async () => {},
    };
    await leaseStreams(seeded.db, [seededSpaceId(1)]);
    const appended = await send(seeded.db, bus, 1, 'published');
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({ seq: Number(appended.event_seq), data: { content: 'published' } });
    expect(heard).toEqual(published);
  });
});
