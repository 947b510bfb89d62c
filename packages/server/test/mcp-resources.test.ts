import { deleteMcpSession, sweepMcpSessions } from '@convene/core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  EmptyResultSchema,
  ListResourcesResultSchema,
  ReadResourceResultSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectOk, onPostgres, type SpaceFixture, useServer } from './helpers';
import { callOk, connectMcp } from './helpers/mcp';
import { WaitWatcher } from './helpers/waits';

const { srv, h } = useServer();
/** The waits `srv` holds: a call is cancelled, or its session ended, once its wait is certainly waiting. */
let waits: WaitWatcher;
beforeAll(() => {
  waits = new WaitWatcher(srv);
});

/** Collects `notifications/resources/updated` and waits for them. */
function watchUpdates(client: Client) {
  const uris: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    uris.push(notification.params.uri);
  });
  return {
    uris,
    async until(uri: string, count = 1, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (uris.filter((u) => u === uri).length < count) {
        if (Date.now() > deadline) throw new Error(`no notification for ${uri}; got ${JSON.stringify(uris)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

const messagesUri = (space: SpaceFixture) => `convene://space/${space.spaceId}/messages`;

/** A document the owner creates (version 1): its REST path and its resource URI. */
async function createDoc(space: SpaceFixture): Promise<{ path: string; uri: string }> {
  const created = await h.post(`/hub/space/${space.spaceId}/artifact`, {
    key: space.ownerKey,
    body: { name: 'Doc', type: 'markdown', content: 'v1' },
  });
  expectOk(created);
  return {
    path: `/hub/space/${space.spaceId}/artifact/${created.body.id}`,
    uri: `convene://space/${space.spaceId}/artifact/${created.body.id}`,
  };
}

/** A session made by hand (initialize), and JSON-RPC POSTs and GETs within it, on `base`. */
async function rawSession(base: string) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
  expect(init.status).toBe(200);
  const sessionId = init.headers.get('mcp-session-id')!;
  const within = { ...headers, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
  return {
    sessionId,
    post: (message: object, on = base) =>
      fetch(`${on}/mcp`, {
        method: 'POST',
        headers: within,
        body: JSON.stringify({ jsonrpc: '2.0', ...message }),
      }),
    stream: (on = base) =>
      fetch(`${on}/mcp`, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId } }),
    end: (on = base) => fetch(`${on}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': sessionId } }),
  };
}

/** A wait_for_messages of 20 s as call `id` of the session, by the space's owner. */
const startWait = (session: Awaited<ReturnType<typeof rawSession>>, space: SpaceFixture, id: number) =>
  session.post({
    id,
    method: 'tools/call',
    params: {
      name: 'wait_for_messages',
      arguments: { spaceId: space.spaceId, privateKey: space.ownerKey, timeoutSeconds: 20 },
    },
  });

/**
 * A wait_for_messages of 20 s on `srv`, cancelled (notifications/cancelled, sent to `cancelOn`)
 * once it waits: how long its POST took, and its answer. Cancelled at a fixed 300 ms, a call not
 * yet running there (a loaded machine) was not found to cancel, and ran its 20 s.
 */
async function cancelledWait(cancelOn: string) {
  const space = await h.createSpace({ name: 'Cancelled' });
  const session = await rawSession(srv.listenUrl);
  const started = Date.now();
  const waiting = startWait(session, space, 7);
  await waits.waiting(space.spaceId);
  const cancel = await session.post(
    { method: 'notifications/cancelled', params: { requestId: 7, reason: 'the user stopped' } },
    cancelOn,
  );
  expect(cancel.status).toBe(202);
  const answer = await waiting;
  return {
    ms: Date.now() - started,
    body: (await answer.json()) as { id: number; error?: { code: number } },
  };
}

/** Whether a session's GET stream on `streamOn` ends once the session is ended (DELETE) on `endOn`. */
async function streamEndsWithSession(streamOn: string, endOn: string): Promise<boolean> {
  const session = await rawSession(streamOn);
  const stream = await session.stream();
  expect(stream.status).toBe(200);
  const ended = endsWithin(stream, 5_000);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect((await session.end(endOn)).status).toBe(200);
  return ended;
}

/** Whether a GET stream's body ends (the server closed it) within `ms`. */
async function endsWithin(stream: Response, ms: number): Promise<boolean> {
  const reader = stream.body!.getReader();
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    void reader.cancel();
  }, ms);
  try {
    while (!(await reader.read()).done);
  } catch {}
  clearTimeout(timer);
  return !late;
}

describe('MCP resources', () => {
  it('lists templates and the key’s own resources, and reads them', async () => {
    const space = await h.createSpace({ name: 'Resources' });
    const guest = await h.joinActive(space);
    const artifact = await h.post(`/hub/space/${space.spaceId}/artifact`, {
      key: guest.key,
      body: { name: 'Plan', type: 'markdown', content: '# Plan\n' },
    });
    expectOk(artifact);
    await h.post(`/hub/space/${space.spaceId}/messages`, { key: guest.key, body: { content: 'hello' } });
    const client = await connectMcp(srv.url, { 'X-Private-Key': guest.key });
    try {
      const templates = await client.listResourceTemplates();
      expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toEqual([
        'convene://space/{spaceId}/messages',
        'convene://space/{spaceId}/artifact/{artifactId}',
      ]);
      const listed = await client.listResources();
      const artifactUri = `convene://space/${space.spaceId}/artifact/${artifact.body.id}`;
      expect(listed.resources.map((r) => [r.uri, r.mimeType])).toEqual([
        [messagesUri(space), 'application/json'],
        [artifactUri, 'text/markdown'],
      ]);
      const transcript = await client.readResource({ uri: messagesUri(space) });
      const json = JSON.parse((transcript.contents[0] as { text: string }).text);
      expect(json.messages.map((m: any) => m.content)).toEqual(['hello']);
      expect(json.cursor).toBe(json.messages[0].timestamp);
      const doc = await client.readResource({ uri: artifactUri });
      expect(doc.contents[0]).toEqual({ uri: artifactUri, mimeType: 'text/markdown', text: '# Plan\n' });

      // The status and message REST would give, behind the client's one "MCP error <code>:".
      await expect(client.readResource({ uri: 'convene://space/nope/messages' })).rejects.toThrow(
        /^MCP error -32602: 400: unknown resource convene:\/\/space\/nope\/messages: expected /,
      );
      const other = await h.createSpace();
      await expect(client.readResource({ uri: messagesUri(other) })).rejects.toThrow(
        /401: unknown key for this space/,
      );
      await expect(
        client.readResource({
          uri: `convene://space/${space.spaceId}/artifact/00000000-0000-4000-8000-000000000000`,
        }),
      ).rejects.toThrow(/^MCP error -32002: 404: artifact not found$/);
    } finally {
      await client.close();
    }
    // Without a key there is nothing to list.
    const anonymous = await connectMcp(srv.url);
    try {
      expect((await anonymous.listResources()).resources).toEqual([]);
    } finally {
      await anonymous.close();
    }
  });

  it('takes the key as a privateKey param beside the uri, as tools take it as an argument (a connection without the header)', async () => {
    const space = await h.createSpace({ name: 'Keys as params' });
    const guest = await h.joinActive(space);
    await h.post(`/hub/space/${space.spaceId}/messages`, { key: guest.key, body: { content: 'hello' } });
    // A wrong header: the param wins, as privateKey does over X-Private-Key for tools.
    const client = await connectMcp(srv.url, { 'X-Private-Key': 'f'.repeat(64) });
    try {
      const listed = await client.request(
        { method: 'resources/list', params: { privateKey: guest.key } },
        ListResourcesResultSchema,
      );
      expect(listed.resources.map((r) => r.uri)).toEqual([messagesUri(space)]);
      const read = await client.request(
        { method: 'resources/read', params: { uri: messagesUri(space), privateKey: guest.key } },
        ReadResourceResultSchema,
      );
      expect(JSON.parse((read.contents[0] as { text: string }).text).messages[0].content).toBe('hello');
      // Copied with a space and a line break around it, as a model or a hand often copies a key.
      const padded = await client.request(
        { method: 'resources/read', params: { uri: messagesUri(space), privateKey: ` ${guest.key}\n` } },
        ReadResourceResultSchema,
      );
      expect(padded.contents).toEqual(read.contents);
      await client.request(
        { method: 'resources/subscribe', params: { uri: messagesUri(space), privateKey: guest.key } },
        EmptyResultSchema,
      );
      await expect(client.readResource({ uri: messagesUri(space) })).rejects.toThrow(/401: /);
    } finally {
      await client.close();
    }
  });

  it('gives an empty transcript the cursor list_messages gives: the space’s creation time, never null', async () => {
    const space = await h.createSpace();
    const client = await connectMcp(srv.url, { 'X-Private-Key': space.ownerKey });
    try {
      const transcript = await client.readResource({ uri: messagesUri(space) });
      const json = JSON.parse((transcript.contents[0] as { text: string }).text);
      const listed = await callOk(client, 'list_messages', { spaceId: space.spaceId });
      expect(json).toEqual({ messages: [], cursor: listed.cursor });
      expect(json.cursor).toMatch(/^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/);
      // It is a cursor: passed back as timestamp, it reads the first message.
      await h.post(`/hub/space/${space.spaceId}/messages`, {
        key: space.ownerKey,
        body: { content: 'first' },
      });
      const next = await callOk(client, 'list_messages', { spaceId: space.spaceId, timestamp: json.cursor });
      expect(next.messages.map((m: { content: string }) => m.content)).toEqual(['first']);
    } finally {
      await client.close();
    }
  });

  it('notifies a subscribed session of a message sent over REST and of an artifact write, until it unsubscribes', async () => {
    const space = await h.createSpace();
    const guest = await h.joinActive(space);
    const client = await connectMcp(srv.url, { 'X-Private-Key': guest.key });
    const updates = watchUpdates(client);
    try {
      await client.subscribeResource({ uri: messagesUri(space) });
      expectOk(
        await h.post(`/hub/space/${space.spaceId}/messages`, {
          key: space.ownerKey,
          body: { content: 'ping' },
        }),
      );
      await updates.until(messagesUri(space));

      const { path: base, uri: docUri } = await createDoc(space);
      await client.subscribeResource({ uri: docUri });
      expectOk(await h.post(`${base}/lock`, { key: space.ownerKey }));
      expectOk(await h.patch(base, { key: space.ownerKey, body: { content: 'v2' } }));
      await updates.until(docUri);

      await client.unsubscribeResource({ uri: messagesUri(space) });
      const before = updates.uris.filter((u) => u === messagesUri(space)).length;
      // The unsubscription reaches the stream's node through the database's notification.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expectOk(
        await h.post(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey, body: { content: 'x' } }),
      );
      expectOk(await h.patch(base, { key: space.ownerKey, body: { content: 'v3' } }));
      await updates.until(docUri, 2);
      expect(updates.uris.filter((u) => u === messagesUri(space))).toHaveLength(before);
    } finally {
      await client.close();
    }
  });

  it('says nothing of what changed before a subscription, and tells each later change once', async () => {
    const space = await h.createSpace();
    const guest = await h.joinActive(space);
    for (const content of ['one', 'two'])
      expectOk(
        await h.post(`/hub/space/${space.spaceId}/messages`, { key: space.ownerKey, body: { content } }),
      );
    const { path: base, uri: docUri } = await createDoc(space);
    expectOk(await h.post(`${base}/lock`, { key: space.ownerKey }));
    expectOk(await h.patch(base, { key: space.ownerKey, body: { content: 'v2' } }));

    const client = await connectMcp(srv.url, { 'X-Private-Key': guest.key });
    const updates = watchUpdates(client);
    try {
      await client.subscribeResource({ uri: messagesUri(space) });
      await client.subscribeResource({ uri: docUri });
      // Long enough for the stream's node to hear of the subscriptions and catch up.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(updates.uris).toEqual([]);

      expectOk(
        await h.post(`/hub/space/${space.spaceId}/messages`, {
          key: space.ownerKey,
          body: { content: 'three' },
        }),
      );
      expectOk(await h.patch(base, { key: space.ownerKey, body: { content: 'v3' } }));
      await updates.until(docUri);
      await updates.until(messagesUri(space));
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(updates.uris.filter((u) => u === messagesUri(space))).toHaveLength(1);
      expect(updates.uris.filter((u) => u === docUri)).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it('tells a subscribed session that its resources changed when the space closes, so that a read says why', async () => {
    const space = await h.createSpace();
    const guest = await h.joinActive(space);
    const { uri: docUri } = await createDoc(space);
    const client = await connectMcp(srv.url, { 'X-Private-Key': guest.key });
    const updates = watchUpdates(client);
    try {
      await client.subscribeResource({ uri: messagesUri(space) });
      await client.subscribeResource({ uri: docUri });
      // The stream's node has the subscriptions once a message is heard.
      expectOk(
        await h.post(`/hub/space/${space.spaceId}/messages`, {
          key: space.ownerKey,
          body: { content: 'ping' },
        }),
      );
      await updates.until(messagesUri(space));
      expectOk(await h.delete(`/hub/space/${space.spaceId}`, { key: space.ownerKey }));
      await updates.until(messagesUri(space), 2);
      await updates.until(docUri);
      await expect(client.readResource({ uri: messagesUri(space) })).rejects.toThrow(/space is closed/);
    } finally {
      await client.close();
    }
  });

  it('refuses a subscription with a key that may not read the space', async () => {
    const space = await h.createSpace();
    const invitation = await h.invite(space);
    const client = await connectMcp(srv.url, { 'X-Private-Key': invitation });
    try {
      await expect(client.subscribeResource({ uri: messagesUri(space) })).rejects.toThrow(/401/);
    } finally {
      await client.close();
    }
  });

  it('sends progress notifications while wait_for_messages waits', async () => {
    const space = await h.createSpace();
    const client = await connectMcp(srv.url);
    try {
      const progress: unknown[] = [];
      const started = Date.now();
      const result = await client.callTool(
        {
          name: 'wait_for_messages',
          arguments: { spaceId: space.spaceId, timeoutSeconds: 2, privateKey: space.ownerKey },
        },
        undefined,
        { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true },
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
      expect((result.structuredContent as { messages: unknown[] }).messages).toEqual([]);
      expect(progress.length).toBeGreaterThanOrEqual(1);
      expect(progress[0]).toEqual({ progress: 0, total: 2, message: 'waiting for messages' });
    } finally {
      await client.close();
    }
  });

  it('answers JSON-RPC errors to a subscription without a session', async () => {
    const space = await h.createSpace();
    const res = await h.post('/mcp', {
      key: space.ownerKey,
      headers: { Accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: messagesUri(space) } },
    });
    expectOk(res);
    expect(res.body.error.message).toMatch(/resource subscriptions belong to a session/);
  });

  it('stops a call its client cancels (notifications/cancelled), which answers at once', async () => {
    const { ms, body } = await cancelledWait(srv.listenUrl);
    expect(body).toMatchObject({ id: 7, error: { code: -32800 } });
    expect(ms).toBeLessThan(5_000);
  });

  it('ends the session’s notification streams with DELETE', async () => {
    expect(await streamEndsWithSession(srv.listenUrl, srv.listenUrl)).toBe(true);
  });

  it('ends a notification stream whose session is ended while the stream is being opened', async () => {
    // The GET checks its session, then counts its stream and opens it: a session ended in between,
    // its notice heard before the stream listened, left the stream open until its client went.
    const streams = srv.server.app.mcpStreams!;
    const open = streams.open;
    streams.open = async (sessionId, res) => {
      expect(await deleteMcpSession({ deps: srv.server.deps, sessionId })).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 300));
      return open.call(streams, sessionId, res);
    };
    try {
      const session = await rawSession(srv.listenUrl);
      const stream = await session.stream();
      expect(stream.status).toBe(200);
      expect(await endsWithin(stream, 5_000)).toBe(true);
    } finally {
      streams.open = open;
    }
  });

  it('ends a session’s notification streams and running calls when it is forgotten (unused for a day) or ended', async () => {
    const forgotten = await rawSession(srv.listenUrl);
    const stream = await forgotten.stream();
    expect(stream.status).toBe(200);
    const streamEnded = endsWithin(stream, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const later = new Date(Date.now() + 2 * 24 * 60 * 60 * 1000);
    expect(
      await sweepMcpSessions({ deps: { ...srv.server.deps, clock: { now: () => later } } }),
    ).toBeGreaterThan(0);
    expect(await streamEnded).toBe(true);

    const ended = await rawSession(srv.listenUrl);
    const space = await h.createSpace();
    const started = Date.now();
    const waiting = startWait(ended, space, 9);
    await waits.waiting(space.spaceId);
    expect((await ended.end()).status).toBe(200);
    expect(await (await waiting).json()).toMatchObject({ id: 9, error: { code: -32800 } });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('ends a session with DELETE: its id is then unknown (404)', async () => {
    const client = await connectMcp(srv.url);
    const transport = (client as unknown as { transport: StreamableHTTPClientTransport }).transport;
    const sessionId = transport.sessionId!;
    expect(sessionId).toMatch(/^[A-Za-z0-9_-]{32}$/);
    await transport.terminateSession();
    const res = await h.post('/mcp', {
      headers: { Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': sessionId },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
    });
    expect(res.status).toBe(404);
    await client.close();
  });
});

describe.runIf(onPostgres())('MCP sessions across nodes', () => {
  const { srv: b } = useServer(() => ({ databaseUrl: srv.databaseUrl! }));

  it('notifies on the stream one node holds of a subscription another node took and a send on a third path', async () => {
    const space = await h.createSpace();
    const guest = await h.joinActive(space);
    // Requests (POST) go to node A, the notification stream (GET) to node B.
    const split: typeof fetch = (input, init) => {
      const url = new URL(String(input instanceof Request ? input.url : input));
      const target = new URL(url.pathname, (init?.method ?? 'GET') === 'GET' ? b.listenUrl : srv.listenUrl);
      return fetch(target, init);
    };
    const client = new McpClient({ name: 'split', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', srv.listenUrl), {
        requestInit: { headers: { 'X-Private-Key': guest.key } },
        fetch: split,
      }),
    );
    const updates = watchUpdates(client);
    try {
      await client.subscribeResource({ uri: messagesUri(space) });
      // A send on node B itself, then one on node A.
      expectOk(
        await fetch(`${b.listenUrl}/hub/space/${space.spaceId}/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-private-key': space.ownerKey },
          body: JSON.stringify({ content: 'on B' }),
        }).then(async (r) => ({ status: r.status, headers: r.headers, body: await r.json(), text: '' })),
      );
      await updates.until(messagesUri(space));
      expectOk(
        await h.post(`/hub/space/${space.spaceId}/messages`, {
          key: space.ownerKey,
          body: { content: 'on A' },
        }),
      );
      await updates.until(messagesUri(space), 2);
    } finally {
      await client.close();
    }
  });

  it('stops a call cancelled through another node', async () => {
    const { ms, body } = await cancelledWait(b.listenUrl);
    expect(body).toMatchObject({ id: 7, error: { code: -32800 } });
    expect(ms).toBeLessThan(5_000);
  });

  it('ends a session’s notification stream on one node when another ends the session', async () => {
    expect(await streamEndsWithSession(srv.listenUrl, b.listenUrl)).toBe(true);
  });

  it('forgets a session at once on every node when one node ends it (DELETE)', async () => {
    const mcpPost = (base: string, sessionId: string) =>
      fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': sessionId,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      });
    const client = await connectMcp(srv.listenUrl);
    const sessionId = (client as unknown as { transport: StreamableHTTPClientTransport }).transport
      .sessionId!;
    // Node A has seen the session work; node B ends it.
    expect((await mcpPost(srv.listenUrl, sessionId)).status).toBe(200);
    const ended = await fetch(`${b.listenUrl}/mcp`, {
      method: 'DELETE',
      headers: { 'mcp-session-id': sessionId },
    });
    expect(ended.status).toBe(200);
    const after = await mcpPost(srv.listenUrl, sessionId);
    expect(after.status).toBe(404);
    expect(((await after.json()) as { error: string }).error).toMatch(/unknown or expired MCP session/);
    await client.close().catch(() => {});
  });
});
