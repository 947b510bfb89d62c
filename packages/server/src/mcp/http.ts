import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { RouteHandlerMethod } from 'fastify';
import { sendError, takeOver } from '../http/reply';
import type { RouteScope } from '../routes/scope';
import { createMcpServer } from './server';
import type { SpaceWatch } from './tool';

/**
 * `/mcp`: the Model Context Protocol over Streamable HTTP, stateless. Each POST gets a fresh
 * server and transport, so any node answers any request and nothing is kept between calls.
 * There are no server-initiated streams in stateless mode, so GET and DELETE answer 405.
 */
export function mcpHandler({ app, config, deps, api }: RouteScope): RouteHandlerMethod {
  const allowedOrigin = new URL(config.publicUrl).origin;
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

  return async (request, reply) => {
    if (request.method !== 'POST')
      return sendError(
        reply,
        405,
        { error: 'this MCP endpoint is stateless: send JSON-RPC requests with POST' },
        { Allow: 'POST' },
      );
    const refused = refusal(request.headers, allowedOrigin);
    if (refused) return sendError(reply, refused.status, { error: refused.error });
    const server = createMcpServer({ deps, shutdown: shutdown.signal, watch, tools: api.tools });
    // No sessionIdGenerator: stateless mode (exactOptionalPropertyTypes forbids writing `undefined`).
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    // The transport writes to the raw response.
    takeOver(reply);
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
  };
}

/**
 * What /mcp refuses before the MCP transport sees the request, as a JSON error: a browser page of
 * another origin (DNS rebinding: a page whose host name now points at this server; its Origin
 * gives it away), and a Host the transport cannot build a URL from (it would answer an empty 400).
 * Requests without Origin (every non-browser MCP client) pass.
 */
export function refusal(
  headers: Record<string, string | string[] | undefined>,
  allowedOrigin: string,
): { status: number; error: string } | null {
  const origin = headers.origin;
  if (origin !== undefined && origin !== allowedOrigin)
    return { status: 403, error: `requests from origin ${String(origin)} are not allowed here` };
  const host = headers.host;
  if (typeof host !== 'string' || host === '' || !URL.canParse(`http://${host}/`))
    return { status: 400, error: 'the Host header is missing or invalid' };
  return null;
}
