import { connect, type Socket } from 'node:net';
import { rowsOf } from '@convene/core';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectOk, onPostgres, useServer } from './helpers';
import { callError, connectMcp } from './helpers/mcp';
import { SseStream } from './helpers/sse';
import { WaitWatcher } from './helpers/waits';

// Streams a client holds: capped per key and per address across nodes (429 beyond), cut off once their client
// leaves too much unread (it resumes with Last-Event-ID), and fed again after the node's LISTEN
// connection dropped. Caps and the bound are lowered here; the defaults are 20, 200 and 1 MiB.
const MAX_QUEUED = 64 * 1024;
const { srv, h } = useServer({
  config: { streamsPerCredential: 3, streamsPerAddress: 5, streamMaxQueuedBytes: MAX_QUEUED },
});

/** The waits `srv` holds: each holds its slot by then (admitted before it waits). */
let waiting: WaitWatcher;
beforeAll(() => {
  waiting = new WaitWatcher(srv);
});

const open = (spaceId: string, key: string, headers: Record<string, string> = {}) =>
  SseStream.open(srv.listenUrl, spaceId, { key, headers });

describe('open streams', () => {
  it('are capped per key and per address: 429 with Retry-After beyond, a slot again once one closes', async () => {
    const space = await h.createSpace();
    const member = await h.joinActive(space);
    const streams: SseStream[] = [];
    try {
      for (let i = 0; i < 3; i++) streams.push((await open(space.spaceId, space.ownerKey)) as SseStream);
      const fourth = await open(space.spaceId, space.ownerKey);
      expect(fourth).not.toBeInstanceOf(SseStream);
      const refused = fourth as { status: number; headers: Headers; body: { error: string } };
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(refused.body.error).toMatch(/too many open streams for this key/);
      // Another key from the same address: two more, then the address is full.
      for (let i = 0; i < 2; i++) streams.push((await open(space.spaceId, member.key)) as SseStream);
      const sixth = await open(space.spaceId, member.key);
      expect((sixth as { status: number }).status).toBe(429);
      expect((sixth as { body: { error: string } }).body.error).toMatch(/for this address/);
      // Closing one frees its slot (once the server has seen the close).
      streams.shift()!.close();
      let again = await open(space.spaceId, space.ownerKey);
      for (let i = 0; !(again instanceof SseStream) && i < 50; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        again = await open(space.spaceId, space.ownerKey);
      }
      expect(again).toBeInstanceOf(SseStream);
      streams.push(again as SseStream);
      // Refused streams and unknown keys hold no slot.
      expectError(await h.get(`/hub/space/${space.spaceId}`, { key: 'f'.repeat(64) }), 401);
    } finally {
      for (const stream of streams) stream.close();
    }
  });
});

describe('long polls', () => {
  it('count among the open streams of their key and address while they wait, and free their slot when answered', async () => {
    const space = await h.createSpace();
    const listed = `/hub/space/${space.spaceId}/messages?wait=20&timestamp=${new Date().toISOString()}`;
    // Three waits of one key (its cap here): a fourth is refused while they wait.
    const waits = [h.get(listed, { key: space.ownerKey }), h.get(listed, { key: space.ownerKey })];
    const stream = (await open(space.spaceId, space.ownerKey)) as SseStream;
    try {
      // Both waiting, so both admitted: a fixed 300 ms only assumed they were by then.
      await waiting.waiting(space.spaceId, 2);
      const fourth = await h.get(listed, { key: space.ownerKey });
      expectError(fourth, 429);
      expect(fourth.headers.get('retry-after')).toBe('5');
      expect(fourth.body.error).toMatch(/too many open streams for this key/);
      // A message answers the waits, which give their slots back.
      expectOk(
        await h.post(`/hub/space/${space.spaceId}/messages`, {
          key: space.ownerKey,
          body: { content: 'hi' },
        }),
      );
      for (const answered of await Promise.all(waits)) expectOk(answered);
      let again = await h.get(`/hub/space/${space.spaceId}/inbox?wait=0`, { key: space.ownerKey });
      for (let i = 0; again.status === 429 && i < 50; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        again = await h.get(`/hub/space/${space.spaceId}/inbox?wait=1`, { key: space.ownerKey });
      }
      expectOk(again);
    } finally {
      stream.close();
    }
  });
});

describe('MCP waits', () => {
  it('count among the open streams of their key and address while they wait, whichever way the key comes', async () => {
    const space = await h.createSpace();
    const since = new Date().toISOString();
    const byArgument = await connectMcp(srv.listenUrl);
    const byHeader = await connectMcp(srv.listenUrl, { 'X-Private-Key': space.ownerKey });
    const wait = (client: typeof byArgument, args: Record<string, unknown> = {}) =>
      client.callTool({
        name: 'wait_for_messages',
        arguments: { spaceId: space.spaceId, timestamp: since, timeoutSeconds: 20, ...args },
      });
    try {
      // Three streams of one key (its cap here): the header client's session stream (the official
      // client opens it once initialized), a wait by header and one with the key as argument; a
      // long-polling list_messages is refused while they wait.
      const waits = [wait(byArgument, { privateKey: space.ownerKey }), wait(byHeader)];
      // Closed in `finally`, the clients fail these calls: no unhandled rejection beside a failure.
      for (const call of waits) call.catch(() => {});
      // Both waiting, so both admitted: a fixed 300 ms only assumed they were by then.
      await waiting.waiting(space.spaceId, 2);
      const fourth = await callError(
        byArgument,
        'list_messages',
        { spaceId: space.spaceId, timestamp: since, wait: 20, privateKey: space.ownerKey },
        429,
      );
      expect(fourth.error).toMatch(/too many open streams for this key/);
      // So is the key's event stream.
      expect(((await open(space.spaceId, space.ownerKey)) as { status: number }).status).toBe(429);
      // A message answers the waits, which give their slots back.
      expectOk(
        await h.post(`/hub/space/${space.spaceId}/messages`, {
          key: space.ownerKey,
          body: { content: 'hi' },
        }),
      );
      for (const answered of await Promise.all(waits))
        expect(answered.isError, JSON.stringify(answered.content)).toBeFalsy();
      let again = await open(space.spaceId, space.ownerKey);
      for (let i = 0; !(again instanceof SseStream) && i < 50; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        again = await open(space.spaceId, space.ownerKey);
      }
      expect(again).toBeInstanceOf(SseStream);
      (again as SseStream).close();
      // A call that does not wait holds no slot.
      const none = (await byArgument.callTool({
        name: 'list_messages',
        arguments: { spaceId: space.spaceId, privateKey: space.ownerKey },
      })) as { isError?: boolean };
      expect(none.isError).toBeFalsy();
    } finally {
      await byArgument.close();
      await byHeader.close();
    }
  });
});

describe('A2A and MCP notification streams', () => {
  /** A JSON-RPC POST to the space's A2A endpoint, left open when it answers a stream. */
  const a2a = (spaceId: string, key: string, body: object, signal: AbortSignal) =>
    fetch(`${srv.listenUrl}/hub/space/${spaceId}/a2a`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Private-Key': key, Accept: 'text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...body }),
      signal,
    });

  it('count among the open streams of their key and address: 429 beyond, as the event stream', async () => {
    const space = await h.createSpace();
    const sent = await h.post(`/hub/space/${space.spaceId}/messages`, {
      key: space.ownerKey,
      body: { content: 'a task to follow' },
    });
    expectOk(sent);
    const resubscribe = { method: 'tasks/resubscribe', params: { id: sent.body.messageId } };
    const controller = new AbortController();
    // The open responses are held to the end: fetch cancels the body of a Response collected as
    // garbage, which would close its stream and free its slot mid-test.
    const held: Response[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const res = await a2a(space.spaceId, space.ownerKey, resubscribe, controller.signal);
        held.push(res);
        expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
      }
      const fourth = await a2a(space.spaceId, space.ownerKey, resubscribe, controller.signal);
      const refused = (await fourth.json()) as { error: { message: string } };
      expect(refused.error).toMatchObject({ code: -32000, data: { status: 429 } });
      expect(refused.error.message).toMatch(/too many open streams for this key/);
      // The event stream of the same key shares the count.
      const sse = await open(space.spaceId, space.ownerKey);
      expect((sse as { status: number }).status).toBe(429);

      // MCP sessions' notification streams count against the address (5 here, 3 taken).
      const mcp = async () => {
        const init = await fetch(`${srv.listenUrl}/mcp`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: {
              protocolVersion: '2025-06-18',
              capabilities: {},
              clientInfo: { name: 't', version: '1' },
            },
          }),
        });
        const session = init.headers.get('mcp-session-id')!;
        await init.text();
        const res = await fetch(`${srv.listenUrl}/mcp`, {
          headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': session },
          signal: controller.signal,
        });
        held.push(res);
        return res;
      };
      for (let i = 0; i < 2; i++) expect((await mcp()).status).toBe(200);
      const beyond = await mcp();
      expect(beyond.status).toBe(429);
      expect(((await beyond.json()) as { error: string }).error).toMatch(/for this address/);
    } finally {
      // Read here, `held` stays alive (an optimised body may drop a variable no longer read).
      for (const res of held) await res.body?.cancel().catch(() => {});
      controller.abort();
    }
  });
});

describe.runIf(onPostgres())('open streams on two nodes', () => {
  const { srv: b } = useServer(() => ({
    databaseUrl: srv.databaseUrl!,
    config: { streamsPerCredential: 3, streamsPerAddress: 5 },
  }));
  const openOn = (node: typeof srv, spaceId: string, key: string) =>
    SseStream.open(node.listenUrl, spaceId, { key });

  it('share one count: opens racing on both nodes admit exactly the cap, and a close on one frees a slot on the other', async () => {
    const space = await h.createSpace();
    const tries = await Promise.all(
      [srv, b, srv, b, srv, b, srv, b].map((node) => openOn(node, space.spaceId, space.ownerKey)),
    );
    const streams = tries.filter((t): t is SseStream => t instanceof SseStream);
    try {
      expect(streams).toHaveLength(3);
      expect(
        tries.filter((t) => !(t instanceof SseStream)).map((t) => (t as { status: number }).status),
      ).toEqual([429, 429, 429, 429, 429]);
      // Free one on whichever node holds it; the other node (or either) admits one again.
      streams.shift()!.close();
      let again = await openOn(b, space.spaceId, space.ownerKey);
      for (let i = 0; !(again instanceof SseStream) && i < 50; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        again = await openOn(b, space.spaceId, space.ownerKey);
      }
      expect(again).toBeInstanceOf(SseStream);
      streams.push(again as SseStream);
      expect((await openOn(srv, space.spaceId, space.ownerKey)) as { status: number }).toMatchObject({
        status: 429,
      });
    } finally {
      for (const stream of streams) stream.close();
    }
  });
});

describe('a client that stops reading', () => {
  it('is cut off once its unread output passes the bound, and resumes with Last-Event-ID with nothing lost', async () => {
    const space = await h.createSpace();
    const path = `/hub/space/${space.spaceId}/messages/stream`;
    // A raw socket that reads the headers and first frames, then never reads again.
    const url = new URL(srv.listenUrl);
    const socket: Socket = connect(Number(url.port), url.hostname);
    let head = '';
    await new Promise<void>((resolve) => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nX-Private-Key: ${space.ownerKey}\r\n\r\n`);
      socket.on('data', (chunk) => {
        head += chunk.toString();
        if (head.includes('event: context')) {
          socket.pause();
          resolve();
        }
      });
    });
    expect(head).toMatch(/^HTTP\/1.1 200/);
    // A healthy reader beside it sees every message, in order, while the stalled one is cut.
    const reader = await SseStream.connect(srv.listenUrl, space.spaceId, { key: space.ownerKey });
    await reader.until((e) => e.event === 'context');
    const hub = srv.server.app.eventHub!;
    expect(hub.openStreams).toBe(2);
    const big = 'x'.repeat(60_000);
    // The paused socket's kernel buffers fill first (a few MB on loopback), then the server's.
    let sent = 0;
    while (hub.openStreams > 1 && sent < 600) {
      expectOk(
        await h.post(`/hub/space/${space.spaceId}/messages`, {
          key: space.ownerKey,
          body: { content: `${sent} ${big}` },
        }),
      );
      sent++;
    }
    expect(hub.openStreams).toBe(1);
    const seen = await reader.take(sent, 20_000);
    expect(seen.map((e) => Number(e.json.content.split(' ')[0]))).toEqual([...Array(sent).keys()]);
    reader.close();
    // The cut client resumes after the last event it received: everything after it, once each.
    const resumed = await SseStream.connect(srv.listenUrl, space.spaceId, {
      key: space.ownerKey,
      lastEventId: String(Number(seen[0]!.id) - 1),
    });
    try {
      const replay = await resumed.take(sent, 20_000);
      expect(replay.map((e) => e.id)).toEqual(seen.map((e) => e.id));
    } finally {
      resumed.close();
    }
    socket.destroy();
  }, 120_000);
});

describe.runIf(onPostgres())('the node’s LISTEN connection', () => {
  it('comes back after it drops, and its streams get what was sent meanwhile', async () => {
    const space = await h.createSpace();
    const stream = await SseStream.connect(srv.listenUrl, space.spaceId, { key: space.ownerKey });
    try {
      await stream.until((e) => e.event === 'context');
      const killed = rowsOf<{ n: number | string }>(
        await srv.server.database.db.execute(sql`
          select count(pg_terminate_backend(pid)) as n from pg_stat_activity
          where application_name = 'convene-listen' and datname = current_database()`),
      );
      expect(Number(killed[0]?.n)).toBeGreaterThan(0);
      // Sent while the node may not be listening: delivered once it listens again (resync).
      expectOk(
        await h.post(`/hub/space/${space.spaceId}/messages`, {
          key: space.ownerKey,
          body: { content: 'during' },
        }),
      );
      const during = await stream.until((e) => e.event === 'message', 15_000);
      expect(during.at(-1)!.json.content).toBe('during');
      expectOk(
        await h.post(`/hub/space/${space.spaceId}/messages`, {
          key: space.ownerKey,
          body: { content: 'after' },
        }),
      );
      const after = await stream.until((e) => e.event === 'message', 10_000);
      expect(after.at(-1)!.json.content).toBe('after');
    } finally {
      stream.close();
    }
  });
});
