import { ZTimestampQuery } from '@convene/contract';
import { openStream } from '@convene/core';
import type { FastifyInstance } from 'fastify';
import type { EventHub } from '../events/hub';
import { StreamConnection } from '../events/stream-connection';
import { toHttpError } from '../http/errors';
import { sendError } from '../http/policy';
import { rawPaths } from '../openapi';
import { appRouter } from '../routers';
import { createContextFactory, headerValue, t } from '../trpc';
import type { RawRouteOptions } from '.';

declare module 'fastify' {
  interface FastifyInstance {
    /** The process's event hub; set by createServer once it listens. */
    eventHub: EventHub | null;
  }
}

const STREAM_PATH = '/hub/space/:spaceId/messages/stream';

/**
 * GET /hub/space/{spaceId}/messages/stream: Server-Sent Events. Errors before the stream starts
 * are ordinary JSON errors; after that, the stream subscribes, replays its backlog and goes live.
 */
export async function registerStreamRoutes(
  app: FastifyInstance,
  { config, deps }: RawRouteOptions,
): Promise<void> {
  if (!app.hasDecorator('eventHub')) app.decorate('eventHub', null);
  documentStream();
  registerSendMessageBinding(app, { config, deps });

  app.get(STREAM_PATH, async (request, reply) => {
    const { spaceId } = request.params as { spaceId: string };
    const query = request.query as Record<string, string | string[] | undefined>;
    const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
    // The header wins; `?key=` is for clients that cannot set headers (EventSource in a browser).
    const key = headerValue(request, 'x-private-key') || first(query.key) || undefined;

    let timestamp: string | undefined;
    const rawTimestamp = first(query.timestamp);
    if (rawTimestamp !== undefined) {
      const parsed = ZTimestampQuery.safeParse(rawTimestamp);
      if (!parsed.success) {
        const { status, body } = toHttpError(parsed.error, config.publicUrl);
        return sendError(reply, status, body);
      }
      timestamp = parsed.data;
    }
    let lastEventId: number | undefined;
    const rawLastEventId = headerValue(request, 'last-event-id')?.trim();
    if (rawLastEventId) {
      if (!/^\d{1,15}$/.test(rawLastEventId))
        return sendError(reply, 400, { error: 'Last-Event-ID must be an event id sent by this stream' });
      lastEventId = Number(rawLastEventId);
    }

    const hub = app.eventHub;
    if (!hub || hub.isClosed) return sendError(reply, 503, { error: 'the server is shutting down' });

    // Subscribe first, so that nothing committed after the starting position can be missed.
    const connection = new StreamConnection({
      hub,
      res: reply.raw,
      spaceId,
      clock: deps.clock,
      lastEventId,
      timestamp,
      onError: (error) => request.log.error({ err: error }, 'event stream failed'),
    });
    let start: Awaited<ReturnType<typeof openStream>>;
    try {
      // The space's messages are notified from here on; then the starting position is taken.
      // HEAD answers the stream's status and headers and never goes live.
      if (request.method !== 'HEAD') await hub.ready(spaceId);
      start = await openStream({ deps, spaceId, key });
    } catch (error) {
      connection.abandon();
      const { status, body, headers } = toHttpError(error, config.publicUrl);
      if (status >= 500) request.log.error({ err: error }, 'opening an event stream failed');
      return sendError(reply, status, body, headers);
    }

    reply.hijack();
    const res = reply.raw;
    // The client left (or the server began closing) while the stream was being authorised.
    if (connection.isEnded) {
      res.destroy();
      return;
    }
    // A hijacked reply skips onSend and does not flush headers set by the policy hooks.
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) res.setHeader(name, value as string | number | readonly string[]);
    }
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      'X-Accel-Buffering': 'no',
      Connection: 'keep-alive',
    });
    res.flushHeaders();
    // HEAD mirrors GET's status and headers; it has no body to stream.
    if (request.method === 'HEAD') {
      connection.abandon();
      res.end();
      return;
    }
    request.raw.socket.setNoDelay(true);
    request.raw.socket.setTimeout(0);
    void connection.begin(start);
  });
}

/**
 * POST /hub/space/{spaceId}/messages, the hottest write, bound directly to the sendMessage
 * procedure (a tRPC server-side call: the same middlewares, input and output validation and
 * body) instead of through the OpenAPI adapter, whose per-request Fetch Request and AbortSignal
 * conversion cost about a third of this route's throughput (see README, Benchmarks). The
 * procedure stays the single definition and documents the operation; errors map in the one
 * place they always do; the policy hooks run as on every route.
 */
function registerSendMessageBinding(app: FastifyInstance, { config, deps }: RawRouteOptions): void {
  const createContext = createContextFactory(deps);
  const createCaller = t.createCallerFactory(appRouter);
  app.post('/hub/space/:spaceId/messages', async (request, reply) => {
    const { spaceId } = request.params as { spaceId: string };
    const ctx = createContext({ req: request, res: reply });
    const body = request.body && typeof request.body === 'object' ? request.body : {};
    try {
      const result = await createCaller(ctx).messages.sendMessage({
        ...(body as Record<string, unknown>),
        spaceId,
      } as never);
      if (ctx.resMeta.headers) reply.headers(ctx.resMeta.headers);
      return reply.code(ctx.resMeta.status ?? 200).send(result);
    } catch (error) {
      const { status, body: errorBody, headers } = toHttpError(error, config.publicUrl);
      if (status >= 500) request.log.error({ err: error }, 'sendMessage failed');
      return sendError(reply, status, errorBody, headers);
    }
  });
}

function documentStream(): void {
  const error = (description: string) => ({
    description,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  });
  rawPaths['/hub/space/{spaceId}/messages/stream'] = {
    get: {
      operationId: 'streamMessages',
      tags: ['messages'],
      summary: 'Server-Sent Events: the message backlog, then live messages and space events',
      description:
        'Events: `message` (MessageView), `participant-status` (ParticipantView), `context` ({participants, artifacts, suggestedPollingIntervalMs}; no id), `artifact-created|updated|locked|unlocked` (ArtifactSummary), `space-closed` ({spaceId, reason: closed|expired}, then the stream ends). Every event but `context` has `id:`, the space event sequence number; send it back as `Last-Event-ID` to resume with every kind of event replayed. A `: ping` comment is sent every 15 s.',
      security: [{ spaceKey: [] }, {}],
      parameters: [
        { name: 'spaceId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
        {
          name: 'timestamp',
          in: 'query',
          required: false,
          description: 'Replay only the messages after this instant',
          schema: { type: 'string', format: 'date-time' },
        },
        {
          name: 'key',
          in: 'query',
          required: false,
          description: 'The space key, for clients that cannot set X-Private-Key',
          schema: { type: 'string' },
        },
        {
          name: 'Last-Event-ID',
          in: 'header',
          required: false,
          description: 'Resume after this event id (takes precedence over timestamp)',
          schema: { type: 'string' },
        },
      ],
      responses: {
        '200': {
          description: 'An event stream',
          content: { 'text/event-stream': { schema: { type: 'string' } } },
        },
        '400': error('Invalid timestamp or Last-Event-ID, or unsupported API-Version'),
        '401': error('Key missing, unknown, or of the wrong type; carries WWW-Authenticate'),
        '404': error('Not found'),
        '429': error('Rate limit exceeded; carries Retry-After'),
      },
    },
  };
}
