import type { Deps } from '@convene/core';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { sendError } from '../http/policy';
import { createMcpServer } from './server';
import type { SpaceWatch } from './tool';

export interface McpRouteOptions {
  deps: Deps;
}

/**
 * `/mcp`: the Model Context Protocol over Streamable HTTP, stateless. Each POST gets a fresh
 * server and transport, so any node answers any request and nothing is kept between calls.
 * There are no server-initiated streams in stateless mode, so GET and DELETE answer 405.
 */
export function registerMcpRoute(app: FastifyInstance, { deps }: McpRouteOptions): void {
  const shutdown = new AbortController();
  app.addHook('preClose', async () => shutdown.abort());

  // The event hub is attached once the server listens (and may be absent in bare app tests).
  const watch: SpaceWatch = (spaceId, wake) => {
    const hub = app.eventHub;
    if (!hub || hub.isClosed) return () => {};
    const unsubscribe = hub.subscribe(spaceId, {
      deliver: (item) => {
        if (item.type === 'event' && item.event.kind === 'message') wake();
      },
      tick: () => {},
      shutdown: wake,
    });
    // A message committed before the lease holds is found by the wait's first read, or its next.
    hub.ready(spaceId).then(wake, wake);
    return unsubscribe;
  };

  app.post('/mcp', async (request, reply) => {
    const server = createMcpServer({ deps, shutdown: shutdown.signal, watch });
    // No sessionIdGenerator: stateless mode (exactOptionalPropertyTypes forbids writing `undefined`).
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    // The transport writes to the raw response: Fastify's onSend hooks do not run and headers set
    // by the policy hooks (API-Version, rate limits) would be lost unless copied first.
    reply.hijack();
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) reply.raw.setHeader(name, value as string | number | readonly string[]);
    }
    // A call still running at shutdown (a long wait) answers at once; its connection must then
    // close too, or the server's close would wait for the keep-alive timeout.
    const closeConnection = () => {
      if (!reply.raw.headersSent) reply.raw.setHeader('Connection', 'close');
    };
    shutdown.signal.addEventListener('abort', closeConnection, { once: true });
    reply.raw.on('close', () => {
      shutdown.signal.removeEventListener('abort', closeConnection);
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (error) {
      request.log.error({ err: error }, 'MCP request failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
        reply.raw.end(JSON.stringify({ error: 'internal error' }));
      }
    }
  });

  const notAllowed = async (_request: unknown, reply: Parameters<typeof sendError>[0]) =>
    sendError(
      reply,
      405,
      { error: 'this MCP endpoint is stateless: send JSON-RPC requests with POST' },
      {
        Allow: 'POST',
      },
    );
  app.get('/mcp', notAllowed);
  app.delete('/mcp', notAllowed);
}
