import { createMcpSession, deleteMcpSession, ShuttingDownError, touchMcpSession } from '@convene/core';
import { JSONRPCMessageSchema, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { admitStream, admitStreamOf, clientOf, sha256 } from '../http/client';
import { errorBody } from '../http/error-body';
import { NOT_JSON_BODY } from '../http/errors';
import { foreignOrigin } from '../http/origin';
import { sendError, takeOver } from '../http/reply';
import { hasTimedOut, writeDeadline } from '../http/timeout';
import { headerValue } from '../rest/caller';
import type { RouteScope } from '../routes/scope';

/**
 * The MCP SDK's server and transport, and Hono's adapter of Node's request and response: loaded
 * after the server starts, not as it starts, which they cost a third of a second of CPU (most of
 * it the SDK's server and the JSON Schema validator it loads): by the first POST, or a second after
 * the server listens (RUNTIME_WARM_MS), whichever comes first. Not only at the first POST: an
 * install upgraded in place (`npm install -g`) replaces the files of its chunks, and a server
 * started before would fail every /mcp call until restarted.
 */
let runtime: Promise<McpRuntime> | undefined;
type McpRuntime = Awaited<ReturnType<typeof loadRuntime>>;
const mcpRuntime = (): Promise<McpRuntime> => {
  if (!runtime) {
    runtime = loadRuntime();
    // A failed load (a file missing from a broken install) is tried again by the next call.
    runtime.catch(() => {
      runtime = undefined;
    });
  }
  return runtime;
};
/** How long after the server listens the MCP runtime loads, if no /mcp call came first. */
const RUNTIME_WARM_MS = 1_000;
async function loadRuntime() {
  const [{ createMcpServer }, { WebStandardStreamableHTTPServerTransport }, { getRequestListener }] =
    await Promise.all([
      import('./server'),
      import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
      import('@hono/node-server'),
    ]);
  return { createMcpServer, WebStandardStreamableHTTPServerTransport, getRequestListener };
}

/**
 * `/mcp`: the Model Context Protocol over Streamable HTTP. Every POST gets a fresh server and
 * transport; what a session keeps between requests (its id, its resource subscriptions) is in
 * the database, so any node answers any request of any session. `initialize` starts a session
 * (`Mcp-Session-Id`); requests without one still work, minus resource subscriptions. GET opens
 * the session's notification stream (`notifications/resources/updated`) on whichever node it
 * reaches; DELETE ends the session.
 */
export function mcpHandler({ app, config, deps, api, idempotency }: RouteScope): RouteHandlerMethod {
  const allowedOrigin = new URL(config.publicUrl).origin;
  const shutdown = new AbortController();
  app.addHook('preClose', async () => shutdown.abort());
  app.addHook('onListen', (done) => {
    // A failure is said by the first call, which tries again.
    setTimeout(() => void mcpRuntime().catch(() => {}), RUNTIME_WARM_MS).unref();
    done();
  });

  /**
   * Whether the session exists, checked in the database on every use, so that a session one node
   * ended is unknown to every node at once; answers 404 itself when it does not.
   */
  const liveSession = async (sessionId: string, reply: FastifyReply): Promise<boolean> => {
    if (await touchMcpSession({ deps, sessionId })) return true;
    sendError(reply, 404, { error: 'unknown or expired MCP session: send initialize again' });
    return false;
  };

  return async (request, reply) => {
    const refused = refusal(request.headers, allowedOrigin);
    if (refused) return sendError(reply, refused.status, { error: refused.error });
    const sessionId = headerValue(request, 'mcp-session-id') || undefined;

    if (request.method === 'DELETE') {
      if (!sessionId)
        return sendError(reply, 400, { error: 'DELETE /mcp ends a session: send its Mcp-Session-Id' });
      if (!(await deleteMcpSession({ deps, sessionId })))
        return sendError(reply, 404, { error: 'unknown or expired MCP session' });
      return reply.code(200).send({ ok: true });
    }

    if (request.method === 'GET') {
      if (!sessionId)
        return sendError(reply, 400, {
          error:
            'the notification stream belongs to a session: send initialize first, then its Mcp-Session-Id',
        });
      if (!(headerValue(request, 'accept') ?? '').includes('text/event-stream'))
        return sendError(reply, 406, { error: 'the notification stream is text/event-stream: accept it' });
      const streams = app.mcpStreams;
      const hub = app.eventHub;
      if (!streams || !hub || hub.isClosed) throw new ShuttingDownError();
      if (!(await liveSession(sessionId, reply))) return reply;
      // Among the open streams of its credential (the key it carries, else its session) and of its
      // address, as every event stream (decisions.md: 20 and 200, 429 beyond, across every node).
      const release = await admitStream(hub, request, sha256(`mcp-session:${sessionId}`));
      const res = takeOver(reply);
      res.once('close', release);
      // The key it carries keeps its participant seen while the stream is open.
      app.presence.holdUntilClosed(request, res);
      res.writeHead(200, {
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-cache, no-transform',
        'X-Accel-Buffering': 'no',
        Connection: 'keep-alive',
        'Mcp-Session-Id': sessionId,
      });
      res.flushHeaders();
      request.raw.socket.setNoDelay(true);
      request.raw.socket.setTimeout(0);
      await streams.open(sessionId, res);
      return reply;
    }

    const malformed = postRefusalOf(request);
    if (malformed) return sendError(reply, malformed.status, { error: malformed.error });
    const messages = Array.isArray(request.body) ? request.body : [request.body];
    // REST's header (its length checked by the idempotency hook), for the one call of a POST: a
    // batch's calls take the idempotencyKey argument.
    const headerKey = headerValue(request, 'idempotency-key');
    if (headerKey !== undefined && messages.length > 1)
      return sendError(reply, 400, {
        error:
          'Idempotency-Key covers a POST of one call: in a batch, give each write its own idempotencyKey argument',
      });
    // Before a session is made: a runtime that fails to load leaves none behind.
    const { createMcpServer, WebStandardStreamableHTTPServerTransport, getRequestListener } =
      await mcpRuntime();
    const initializing = messages.some((m) => (m as { method?: unknown } | null)?.method === 'initialize');
    let session = sessionId;
    if (initializing) session = await createMcpSession({ deps });
    else if (session && !(await liveSession(session, reply))) return reply;
    // Answered 503 while it waited on the database (its hooks, its session) or the runtime: no
    // call runs.
    if (hasTimedOut(request)) return reply;

    const server = createMcpServer({
      deps,
      shutdown: shutdown.signal,
      tools: api.tools,
      sessionId: session,
      log: request.log,
      client: clientOf(request).rateLimit.address,
      idempotency: {
        gate: idempotency,
        ip: request.ip,
        headerKey,
        deadline: writeDeadline(request),
        replayed: () => {
          if (!reply.raw.headersSent) reply.raw.setHeader('Idempotency-Replayed', 'true');
        },
      },
      track: app.mcpStreams?.track.bind(app.mcpStreams),
      attend: async (key, waits) => {
        if (!waits) return app.presence.attend(key, false);
        const hub = app.eventHub;
        if (!hub || hub.isClosed) throw new ShuttingDownError();
        const release = await admitStreamOf(hub, request, key);
        const unhold = await app.presence.attend(key, true);
        return () => {
          release();
          unhold();
        };
      },
    });
    // One JSON answer, unless a call asked for progress notifications: they need the call's own
    // event stream. No sessionIdGenerator: the transport keeps nothing, the session is ours.
    const wantsProgress = messages.some(
      (m) =>
        (m as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta?.progressToken !==
        undefined,
    );
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: !wantsProgress });
    // The transport writes to the raw response.
    takeOver(reply);
    if (initializing && session) reply.raw.setHeader('Mcp-Session-Id', session);
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
      const batch = Array.isArray(request.body);
      // As the SDK's Node transport does (Node's request and response as the web's), but a
      // batch's answer is an array, one call's too.
      await getRequestListener(
        async (webRequest) => {
          const answer = await transport.handleRequest(webRequest, { parsedBody: request.body });
          return batch ? asBatchAnswer(answer) : answer;
        },
        {
          overrideGlobalObjects: false,
          // Its own default answers an empty 500 and logs nothing: as the rest of the service does.
          errorHandler: (error) => {
            request.log.error({ err: error }, 'MCP request failed');
            return new Response(JSON.stringify(errorBody(500, 'internal error')), {
              status: 500,
              headers: { 'content-type': 'application/json; charset=utf-8' },
            });
          },
        },
      )(request.raw, reply.raw);
    } catch (error) {
      request.log.error({ err: error }, 'MCP request failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
        reply.raw.end(JSON.stringify(errorBody(500, 'internal error')));
      }
    }
    return reply;
  };
}

/**
 * What /mcp refuses before the MCP transport sees the request, as a JSON error: a browser page of
 * another origin (http/origin.ts), and a Host the transport cannot build a URL from (it would
 * answer an empty 400).
 */
export function refusal(
  headers: Record<string, string | string[] | undefined>,
  allowedOrigin: string,
): { status: number; error: string } | null {
  const foreign = foreignOrigin(headers, allowedOrigin);
  if (foreign) return foreign;
  const host = headers.host;
  if (typeof host !== 'string' || host === '' || !URL.canParse(`http://${host}/`))
    return { status: 400, error: 'the Host header is missing or invalid' };
  return null;
}

/**
 * The JSON answer to a batch as JSON-RPC 2.0 gives it: an array. The SDK's transport answers a
 * batch holding one request (notifications beside it answer nothing) with that request's answer
 * alone, an object, which a client reading the batch's answers as an array cannot take.
 */
async function asBatchAnswer(answer: Response): Promise<Response> {
  // A refusal of the whole POST (its status not 200) is one error, as JSON-RPC's for an invalid batch.
  if (answer.status !== 200 || !answer.headers.get('content-type')?.startsWith('application/json'))
    return answer;
  const text = await answer.text();
  const body = text.trimStart().startsWith('{') ? `[${text}]` : text;
  return new Response(body, {
    status: answer.status,
    statusText: answer.statusText,
    headers: answer.headers,
  });
}

/** The SDK transport's own limit on a batch (it would answer more with a JSON-RPC envelope). */
const MAX_BATCH = 100;

const postRefusals = new WeakMap<FastifyRequest, ReturnType<typeof postRefusal>>();

/**
 * A POST's refusal (postRefusal), worked out once per request: the rate limit asks first (a POST
 * refused as a whole counts once), the handler then answers it.
 */
export function postRefusalOf(request: FastifyRequest): ReturnType<typeof postRefusal> {
  if (!postRefusals.has(request)) postRefusals.set(request, postRefusal(request.headers, request.body));
  return postRefusals.get(request) ?? null;
}

/**
 * What a POST to /mcp must be before the MCP transport sees it, refused as JSON `{error}` like
 * every other refusal of the service (the transport would answer a JSON-RPC envelope whose `error`
 * is an object, and 415 for a content type): JSON accepted along with event streams, a JSON body,
 * a supported MCP-Protocol-Version when one is sent, and JSON-RPC 2.0 messages, at most 100 to a
 * batch, with `initialize` alone and no two requests of one id.
 */
function postRefusal(
  headers: Record<string, string | string[] | undefined>,
  body: unknown,
): { status: number; error: string } | null {
  const accept = String(headers.accept ?? '');
  if (!accept.includes('application/json') || !accept.includes('text/event-stream'))
    return {
      status: 406,
      error: 'POST /mcp answers JSON or an event stream: Accept both application/json and text/event-stream',
    };
  const type = String(headers['content-type'] ?? '')
    .split(';')[0]
    ?.trim()
    .toLowerCase();
  if (type !== 'application/json') return { status: 400, error: NOT_JSON_BODY };
  const version = headers['mcp-protocol-version'];
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(String(version)))
    return {
      status: 400,
      error: `unsupported MCP-Protocol-Version ${String(version)} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
    };
  const batch = Array.isArray(body);
  const messages: unknown[] = batch ? body : [body];
  if (messages.length > MAX_BATCH)
    return { status: 400, error: `a JSON-RPC batch holds at most ${MAX_BATCH} calls` };
  const invalid = messages.findIndex((message) => !JSONRPCMessageSchema.safeParse(message).success);
  if (invalid >= 0)
    return {
      status: 400,
      error: `${batch ? `call ${invalid + 1} of the batch is` : 'the body is'} not a JSON-RPC 2.0 message: it needs "jsonrpc": "2.0" and a string "method" (with "id" for a request, "params" an object when given), or is a response`,
    };
  if (
    batch &&
    messages.length > 1 &&
    messages.some((m) => (m as { method?: unknown }).method === 'initialize')
  )
    return { status: 400, error: 'initialize must be sent alone, not in a batch' };
  // The transport files answers by id: a second request of an id lost the first one's answer.
  const ids = new Set<unknown>();
  for (const [i, message] of messages.entries()) {
    const { id, method } = message as { id?: unknown; method?: unknown };
    if (method === undefined || id === undefined) continue;
    if (ids.has(id))
      return {
        status: 400,
        error: `call ${i + 1} of the batch repeats the id ${JSON.stringify(id)} of an earlier call: each request of a batch needs an id of its own`,
      };
    ids.add(id);
  }
  return null;
}
