import { EVENTS_CHANNEL, type EventNotice } from '@convene/core';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectOk, type SpaceFixture, useServer } from './helpers';
import { SseStream } from './helpers/sse';

// Messages NOTIFY the nodes only while some node listens to their space (spaces.streamed_until).
// Renewals only when a test asks for them, so a lapsed lease stays lapsed until then.
const { srv, h } = useServer({ config: { streamLeaseRenewMs: 3_600_000 } });
/** Every notice of the events channel, in the order the database delivered them. */
const notices: EventNotice[] = [];
let unlisten: () => Promise<void>;

beforeAll(async () => {
  unlisten = await srv.server.database.listen(EVENTS_CHANNEL, (payload) => {
    notices.push(JSON.parse(payload) as EventNotice);
  });
});
afterAll(() => unlisten?.());

const send = async (space: SpaceFixture, content: string): Promise<string> => {
  const res = await h.post(`/hub/space/${space.spaceId}/messages`, {
    key: space.ownerKey,
    body: { content },
  });
  expectOk(res);
  return res.body.messageId as string;
};
const streamedUntil = async (space: SpaceFixture): Promise<Date | null> => {
  const result = await srv.server.database.db.execute(
    sql`select streamed_until from spaces where id = ${space.spaceId}`,
  );
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as {
    streamed_until: string | Date | null;
  }[];
  const value = rows[0]!.streamed_until;
  return value === null ? null : new Date(value);
};
const lapse = (space: SpaceFixture) =>
  srv.server.database.db.execute(
    sql`update spaces set streamed_until = now() - interval '1 second' where id = ${space.spaceId}`,
  );
const noticesOf = (space: SpaceFixture) =>
  notices.filter((n) => n.spaceId === space.spaceId && n.kind === 'message');

/**
 * Notices arrive in commit order: once a message sent after `space`'s is notified on a listened
 * space, every notice `space`'s message caused has arrived too.
 */
async function barrier(): Promise<void> {
  const listened = await h.createSpace();
  const stream = await SseStream.connect(srv.url, listened.spaceId, { key: listened.ownerKey });
  await stream.next(); // context
  const id = await send(listened, 'barrier');
  await stream.until((e) => e.event === 'message' && e.json.id === id);
  stream.close();
  // This test's own listener is another connection, which may hear the notice after the server's.
  await vi.waitFor(() => expect(notices.some((n) => n.spaceId === listened.spaceId)).toBe(true));
}

describe('stream leases', () => {
  it('notifies a message only while some node listens to its space', async () => {
    const space = await h.createSpace();
    await send(space, 'nobody listens');
    await barrier();
    expect(noticesOf(space)).toEqual([]);
    expect(await streamedUntil(space)).toBeNull();

    const stream = await SseStream.connect(srv.url, space.spaceId, { key: space.ownerKey });
    const until = await streamedUntil(space);
    expect(until!.getTime()).toBeGreaterThan(Date.now() + 50_000);
    await stream.take(2); // the backlog message, then the context
    const id = await send(space, 'somebody listens');
    const live = await stream.next();
    expect([live.event, live.json.id, live.json.content]).toEqual(['message', id, 'somebody listens']);
    // The stream heard it through the server's listener; this test's may hear it a moment later.
    await vi.waitFor(() => expect(noticesOf(space).map((n) => n.seq)).toEqual([Number(live.id)]));
    stream.close();
  });

  it('leases nothing for HEAD, which never goes live', async () => {
    const space = await h.createSpace();
    const res = await fetch(`${srv.url}/hub/space/${space.spaceId}/messages/stream`, {
      method: 'HEAD',
      headers: { 'X-Private-Key': space.ownerKey },
    });
    expect(res.status).toBe(200);
    expect(await streamedUntil(space)).toBeNull();
  });

  it('lets later streams of the space share the lease this process holds', async () => {
    const space = await h.createSpace();
    const first = await SseStream.connect(srv.url, space.spaceId, { key: space.ownerKey });
    const until = await streamedUntil(space);
    const second = await SseStream.connect(srv.url, space.spaceId, { key: space.ownerKey });
    expect(await streamedUntil(space)).toEqual(until);
    await Promise.all([first.next(), second.next()]); // contexts
    const id = await send(space, 'to both');
    for (const stream of [first, second]) expect((await stream.next()).json.id).toBe(id);
    first.close();
    second.close();
  });

  it('delivers a message sent while the lease had lapsed at the next renewal, then renews it', async () => {
    const space = await h.createSpace();
    const stream = await SseStream.connect(srv.url, space.spaceId, { key: space.ownerKey });
    await stream.next(); // context
    const before = await send(space, 'notified');
    expect((await stream.next()).json.id).toBe(before);

    await lapse(space);
    const missed = await send(space, 'sent while nobody held the lease');
    const after = await send(space, 'also missed');
    await barrier();
    expect(noticesOf(space)).toHaveLength(1);
    expect(stream.remaining).toEqual([]);

    await srv.server.app.eventHub!.renewLeases();
    const [m1, m2] = await stream.take(2);
    expect([m1!.json.id, m2!.json.id]).toEqual([missed, after]);
    expect(Number(m2!.id)).toBe(Number(m1!.id) + 1);
    expect((await streamedUntil(space))!.getTime()).toBeGreaterThan(Date.now() + 50_000);

    const next = await send(space, 'notified again');
    expect((await stream.next()).json.id).toBe(next);
    await vi.waitFor(() => expect(noticesOf(space)).toHaveLength(2));
    stream.close();
  });

  it('renews nothing for a space nobody here listens to any more', async () => {
    const space = await h.createSpace();
    const stream = await SseStream.connect(srv.url, space.spaceId, { key: space.ownerKey });
    await stream.next();
    stream.close();
    await stream.done;
    // Once the server has seen the connection close, a renewal leaves the lapsed lease alone.
    const deadline = Date.now() + 5_000;
    for (;;) {
      await lapse(space);
      await srv.server.app.eventHub!.renewLeases();
      if ((await streamedUntil(space))!.getTime() < Date.now()) break;
      if (Date.now() > deadline) throw new Error('still renewed 5 s after its only stream closed');
      await new Promise((r) => setTimeout(r, 50));
    }
  });
});

describe('stream leases renew on their own', () => {
  const { srv: fast, h: fh } = useServer({ config: { streamLeaseRenewMs: 100 } });

  it('renews the lease of a space streamed on this node every streamLeaseRenewMs', async () => {
    const space = await fh.createSpace();
    const stream = await SseStream.connect(fast.url, space.spaceId, { key: space.ownerKey });
    await stream.next();
    await fast.server.database.db.execute(
      sql`update spaces set streamed_until = null where id = ${space.spaceId}`,
    );
    const deadline = Date.now() + 5_000;
    let renewed = false;
    while (!renewed && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      const result = await fast.server.database.db.execute(
        sql`select streamed_until > now() as leased from spaces where id = ${space.spaceId}`,
      );
      const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as {
        leased: boolean | null;
      }[];
      renewed = rows[0]!.leased === true;
    }
    expect(renewed).toBe(true);
    stream.close();
  });
});
