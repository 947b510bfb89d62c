import { createServer as createHttpServer } from 'node:http';
import { useReadableValidationMessages } from '@convene/contract';
import {
  type Deps,
  purgeSpaces,
  ShuttingDownError,
  SqlIdempotencyStore,
  SqlRateLimiter,
  sendMessageResultOf,
  sweepCollectedJoinKeys,
  sweepStreamNodes,
} from '@convene/core';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { appRouter, buildOpenApiDocument, declarations, neverReplayed, tools } from './api';
import type { ServerConfig } from './env';
import type { EventHub } from './events/hub';
import { admitStream, clientOf } from './http/client';
import { clientErrorHandler, connectRefusal } from './http/client-error';
import { registerCors } from './http/cors';
import { toHttpError } from './http/errors';
import { forwardedWithoutTrust } from './http/forwarded';
import { authorizeReplayOf, idempotencyHooks, skipAnsweredHandlers } from './http/idempotency';
import { serializeError } from './http/log-errors';
import { refuseMisnamedFields } from './http/misnamed-fields';
import { boundPipelining, RUNNING_PER_CONNECTION, WAITING_PER_CONNECTION } from './http/pipelining';
import { normaliseRequest, originForm, registerHttpPolicy, restoreHead } from './http/policy';
import { Presence } from './http/presence';
import { isHealthProbe, isPageRoute, mcpBatchHook, rateLimitHook } from './http/rate-limit';
import { redactedRequestSerializer } from './http/redact';
import { sendError } from './http/reply';
import { requestIds } from './http/request-id';
import { dropUnlogged, logWhenDone, RequestLog, standardOutput } from './http/request-log';
import { type PolicyStores, rateLimitsOf } from './http/stores';
import { registerPolicySweeper } from './http/sweeper';
import { declaredWaitMs, startRequestTimer } from './http/timeout';
import { closeUnreceivedAtShutdown } from './http/unreceived';
import { versioningHooks } from './http/versioning';
import { postRefusalOf } from './mcp/http';
import type { McpSessionStreams } from './mcp/session-streams';
import { openApiAdapter } from './rest/adapter';
import { registerRoutes } from './rest/routes';

declare module 'fastify' {
  interface FastifyInstance {
    /** The process's event hub (streams, MCP waits); set by createServer once it listens. */
    eventHub: EventHub | null;
    /** The MCP sessions' notification streams of this process; set by createServer. */
    mcpStreams: McpSessionStreams | null;
    /** Aborted when the server begins to close: long polls answer at once. */
    shutdownSignal: AbortSignal;
    /**
     * Set when a drain begins (ConveneServer.drain): readiness fails (`GET /api/health` answers
     * 503 shutting_down) while every other request is still served, each answer closing its
     * connection, so a load balancer moves its traffic elsewhere before the node closes.
     */
    draining: boolean;
    /** Verified presence: moves lastSeenAt for the keys used. */
    presence: Presence;
  }
}

export interface AppOptions {
  config: ServerConfig;
  deps: Deps;
  /** Pino logger options, or false to log nothing (tests). */
  logger?: boolean;
  /** Where log lines go instead of stdout (tests that read the log). */
  logStream?: { write(line: string): void };
  /** Storage of the rate limit and idempotency policies; defaults to the database for both. */
  policies?: PolicyStores;
}

/** Builds the HTTP application: policy hooks, the raw route table, then the REST procedures. */
export async function buildApp({
  config,
  deps,
  logger = true,
  logStream,
  policies,
}: AppOptions): Promise<FastifyInstance> {
  // A 400 says `name is at most 200 characters`, not zod's `Too big: expected string to have <=200`.
  useReadableValidationMessages();
  const limits = rateLimitsOf(config);
  const rateLimiter = policies?.rateLimiter ?? new SqlRateLimiter(deps.db, limits.api);
  const pageRateLimiter =
    policies?.pageRateLimiter ?? (limits.pages && new SqlRateLimiter(deps.db, limits.pages));
  const idempotencyStore = policies?.idempotency ?? new SqlIdempotencyStore(deps.db, deps.box);
  const versioning = versioningHooks({
    policy: config.apiVersions,
    clock: deps.clock,
    publicUrl: config.publicUrl,
  });
  const rateLimit = rateLimitHook({
    limiter: rateLimiter,
    ...(pageRateLimiter && { pageLimiter: pageRateLimiter }),
    clock: deps.clock,
    verifySession: async (token, now) => (await deps.sessions.verify(token, now)) !== null,
    publicUrl: config.publicUrl,
  });
  const idempotency = idempotencyHooks({
    store: idempotencyStore,
    clock: deps.clock,
    ttlSeconds: config.idempotencyTtlSeconds,
    waitMs: config.idempotencyWaitMs,
    neverReplayed,
    handledByRoute: ['POST /mcp'],
    authorizeReplay: (operation, caller) => authorizeReplayOf(deps, operation, caller),
    publicUrl: config.publicUrl,
    // The only outcome a statement records itself: a group-committed send (see sendMessage).
    renderOutcome: (outcome) => {
      const result = sendMessageResultOf(deps.config, deps.clock.now(), outcome);
      return (
        result && {
          status: 200,
          headers: { 'content-type': 'application/json; charset=utf-8' },
          body: JSON.stringify(result),
        }
      );
    },
  });

  const ids = requestIds();
  const app = Fastify({
    // A random id per request (or the client's own, when well formed): its Request-Id header and
    // the reqId of its log lines.
    genReqId: ids.genReqId,
    // A target in absolute form is read as its origin form everywhere (http/policy.ts).
    rewriteUrl: originForm,
    logger: logger
      ? {
          level: config.logLevel,
          // No key, hash, email or bound value ever reaches a log line (see log-errors.ts).
          serializers: {
            req: redactedRequestSerializer,
            err: serializeError,
          },
          stream: logStream ?? standardOutput(),
          // Fastify's own listening line: serve.ts prints the readiness line in its place.
          hooks: { logMethod: dropUnlogged },
        }
      : false,
    // One line per request, when it ends (http/request-log.ts).
    logController: new RequestLog(),
    bodyLimit: 2 * 1024 * 1024,
    // The socket's peer and the X-Forwarded-For entries after it, up to the hop count, are our
    // proxies: the client is the next entry from the right. (Fastify's own number refuses them all.)
    trustProxy: config.trustProxy > 0 ? (_address: string, hop: number) => hop < config.trustProxy : false,
    // Node's server with a headers deadline: a request whose headers trickle in is cut off at it
    // (checked twice per deadline; Node checks every 30 s by default, past a 60 s deadline). A
    // body still arriving when the request's deadline has answered 503 is read no longer than
    // that (Node's own default reads it for 300 s); a long wait's request is read at once.
    serverFactory: (handler) =>
      createHttpServer(
        {
          headersTimeout: config.headersTimeoutMs,
          requestTimeout: Math.max(config.requestTimeoutMs + 1_000, config.headersTimeoutMs),
          connectionsCheckingInterval: Math.min(5_000, Math.ceil(config.headersTimeoutMs / 2)),
          // Fastify's 72 s, which it sets only on a server of its own: Node's 5 s closed kept-alive
          // connections before the 60 s of proxies' and load balancers' pools, whose next request
          // on one then failed (a 502 to their client).
          keepAliveTimeout: 72_000,
          // An HTTP/1.1 request without Host is refused by normaliseRequest, as JSON: Node's own
          // refusal was an empty 400 with no Content-Type.
          requireHostHeader: false,
        },
        handler,
      ),
    // Streams are long-lived; SIGTERM ends them explicitly.
    forceCloseConnections: 'idle',
    // A request that arrives while the server closes is refused by the onRequest hook below, as a
    // JSON error with its code: Fastify's own 503 body has none.
    return503OnClosing: false,
    // What Node's HTTP parser refuses (headers too large, a malformed request) answers JSON
    // {error, code} with a Request-Id too, and is logged under it.
    clientErrorHandler: clientErrorHandler(config.apiVersions.current),
    // A URL Fastify cannot route (bad percent-encoding) skips the hooks: apply the same policy.
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      if (logger) logWhenDone(request, reply);
      void (async () => {
        versioning.resolve(request, reply);
        await rateLimit(request, reply);
        return sendError(reply, 400, { error: error.message || 'bad request' });
      })().catch((thrown: unknown) => {
        const mapped = toHttpError(thrown, config.publicUrl);
        sendError(reply, mapped.status, mapped.body, mapped.headers);
      });
    },
  });

  // At most 16 requests of a connection run at once, however many it pipelines: a request waiting
  // its turn reaches no `request` listener, so it costs nothing (http/pipelining.ts).
  boundPipelining(app.server, (socket) =>
    app.log.warn(
      { remoteAddress: socket.remoteAddress },
      `connection closed: more than ${RUNNING_PER_CONNECTION + WAITING_PER_CONNECTION} requests pipelined on it unanswered`,
    ),
  );
  ids.stamp(app.server);
  // A CONNECT never reaches the handler: answered here, as every refusal.
  app.server.on('connect', connectRefusal(config.apiVersions.current, app.log));
  closeUnreceivedAtShutdown(app);
  await registerCors(app, config.corsOrigins);

  // Cross-cutting policy, once, in this order, for every route (tRPC and raw alike), in one
  // onRequest hook (one hook per step cost a promise and a hook-runner turn each):
  // 1. API-Version (and Deprecation/Sunset) first, so every answer carries it, a 429 included;
  // 2. RateLimit-* on every answer; over the limit, 429 and nothing else runs (one round trip;
  //    on PostgreSQL a REST send is counted by its own sending statement instead, which writes
  //    nothing over the limit: see http/rate-limit.ts);
  // 3. 400 for an unsupported or retired API-Version; then bodies, JSON errors and 404s;
  // 4. the space key presented counts as its participant being seen (lastSeenAt).
  const proxyUntrusted = forwardedWithoutTrust(config.trustProxy);
  const presence = new Presence(deps, config.presenceIntervalMs, config.presenceHeldMs, (err) =>
    app.log.warn({ err }, 'presence'),
  );
  app.decorate('presence', presence);
  const shutdown = new AbortController();
  app.addHook('preClose', async () => shutdown.abort());
  app.addHook('onRequest', async (request, reply) => {
    // 0. Its log line, written when it ends, however it ends; a proxy this node does not trust
    //    is said once.
    if (logger) logWhenDone(request, reply);
    proxyUntrusted(request);
    //    Closing: nothing runs (503 with Retry-After and Connection: close, not counted).
    //    Draining: the same for the health probe only; the rest is served, on connections that
    //    close after their answer.
    if (shutdown.signal.aborted || (app.draining && isHealthProbe(request))) {
      versioning.resolve(request, reply);
      throw new ShuttingDownError();
    }
    if (app.draining) reply.header('Connection', 'close');
    //    A request that cannot finish in time answers 503 (streams and long waits excepted; a
    //    long poll's `wait` is added to its time).
    const waitMs = declaredWaitMs(request);
    startRequestTimer(request, reply, config.requestTimeoutMs + waitMs);
    versioning.resolve(request, reply);
    await rateLimit(request, reply);
    versioning.enforce(request);
    normaliseRequest(request);
    // 5. A long poll (`wait`) is one of its client's open streams while it waits (20 per key, 200
    //    per address, across nodes: 429 beyond), as an event stream is.
    if (waitMs > 0 && app.eventHub && clientOf(request).credential) {
      const release = await admitStream(app.eventHub, request);
      reply.raw.once('close', release);
    }
    // A page, a stylesheet or an avatar says nothing of a participant's presence (no key rides on
    // an <img>), and an invented key on one would otherwise cost a write.
    if (!isPageRoute(request)) await presence.touchRequest(request, reply.raw, waitMs > 0);
  });
  registerHttpPolicy(app, config.publicUrl);
  const adapter = openApiAdapter(appRouter, deps, shutdown.signal);
  app.addHook('onSend', adapter.onSend);
  app.addHook('onSend', (request, _reply, payload, done) => {
    restoreHead(request);
    done(null, payload);
  });
  // 2b. A request whose count was left to its use case and answered without it is counted now.
  app.addHook('onSend', rateLimit.settlePending);
  // 4b. A body field that is a slip of one the operation takes: 400, before
  //     anything runs (http/misnamed-fields.ts).
  app.addHook('preValidation', refuseMisnamedFields);
  // 5. Each further call of an MCP JSON-RPC batch counts as a request, once the body is parsed
  //    (a POST /mcp refuses as a whole counts once).
  app.addHook(
    'preHandler',
    mcpBatchHook(rateLimit, (request) => postRefusalOf(request) !== null),
  );
  // 6. Idempotency-Key: replay, or mark the write as guarded before the handler; the handler's
  //    transaction records it (http/idempotency.ts; the idempotent middleware of trpc.ts, rest/direct.ts).
  app.addHook('preHandler', idempotency.preHandler);
  skipAnsweredHandlers(app);
  registerPolicySweeper(app, {
    limiter: rateLimiter,
    store: idempotencyStore,
    clock: deps.clock,
    intervalMs: config.policySweepIntervalMs,
    // Closed and expired spaces, with all they hold, once their retention is over.
    also: [
      // A page budget of its own rows is swept with the API's (one table); one in memory is not.
      ...(pageRateLimiter && !(pageRateLimiter instanceof SqlRateLimiter) ? [pageRateLimiter] : []),
      {
        sweep: (now, limit) =>
          purgeSpaces({
            db: deps.db,
            now,
            retentionSeconds: config.spaceRetentionSeconds,
            limit: Math.min(limit, 200),
          }),
      },
      // Stream slots of nodes that stopped long ago without retiring (a crash).
      { sweep: (_now, limit) => sweepStreamNodes(deps.db, limit) },
      // The tickets and sealed keys of private joins collected more than 10 minutes ago.
      { sweep: (now, limit) => sweepCollectedJoinKeys(deps.db, now, limit) },
    ],
  });

  app.decorate('eventHub', null);
  app.decorate('mcpStreams', null);
  app.decorate('shutdownSignal', shutdown.signal);
  app.decorate('draining', false);
  let document: ReturnType<typeof buildOpenApiDocument> | undefined;
  registerRoutes(app, declarations, {
    app,
    config,
    deps,
    idempotency: idempotency.begin,
    api: { openapi: () => (document ??= buildOpenApiDocument(config.publicUrl)), tools },
  });

  await adapter.register(app);

  return app;
}
