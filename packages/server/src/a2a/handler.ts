import {
  type Deps,
  findKeySpace,
  isUuid,
  NotFoundError,
  ShuttingDownError,
  UnauthorizedError,
  ValidationError,
} from '@convene/core';
import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { admitStream } from '../http/client';
import { toHttpError } from '../http/errors';
import { foreignOrigin } from '../http/origin';
import { sendError, sendRaw, takeOver } from '../http/reply';
import { headerValue } from '../rest/caller';
import type { RouteScope } from '../routes/scope';
import { A2A_ERRORS, A2AError, ZJsonRpcRequest, ZMessageSendParams, ZTaskQueryParams } from './protocol';
import {
  type A2AContext,
  getA2ATask,
  resubscribeA2ATask,
  type StreamItem,
  sendA2AMessage,
  streamA2AMessage,
} from './service';

/** A `: ping` comment keeps idle streams (and their proxies) open. */
const PING_MS = 15_000;

/**
 * The A2A JSON-RPC endpoint: `POST /a2a` (the space is the key's) and `POST
 * /hub/space/{spaceId}/a2a`. The key travels as `X-Private-Key` (the agent cards' apiKey scheme);
 * a missing or dead key is HTTP 401 like everywhere, every other refusal a JSON-RPC error whose
 * `data` carries the REST status and error. `message/stream` and `tasks/resubscribe` answer
 * Server-Sent Events, one JSON-RPC response per event.
 */
export function a2aHandler({ app, config, deps }: RouteScope): RouteHandlerMethod {
  const allowedOrigin = new URL(config.publicUrl).origin;
  return async (request, reply) => {
    // A browser page of another site is refused, as on /mcp.
    const foreign = foreignOrigin(request.headers, allowedOrigin);
    if (foreign) return sendError(reply, foreign.status, { error: foreign.error });
    const pathSpace = (request.params as { spaceId?: string }).spaceId;
    if (pathSpace !== undefined && !isUuid(pathSpace)) throw new NotFoundError('space');
    // Not a JSON-RPC request at all is the HTTP layer's 400 {error}, as on /mcp; a request that
    // is one gets its refusals as JSON-RPC errors.
    const envelope = ZJsonRpcRequest.safeParse(request.body);
    if (!envelope.success)
      throw new ValidationError(
        'not a JSON-RPC 2.0 request: {jsonrpc: "2.0", method, id?, params?: object} expected',
      );
    const { id = null, method, params } = envelope.data;
    const ctx = await contextOf(deps, request, reply, app.shutdownSignal);
    try {
      switch (method) {
        case 'message/send':
          return answer(reply, id, await sendA2AMessage(ctx, parse(ZMessageSendParams, params)));
        case 'tasks/get':
          return answer(reply, id, await getA2ATask(ctx, parse(ZTaskQueryParams, params)));
        case 'message/stream':
          return await stream(
            { app, deps },
            request,
            reply,
            id,
            streamA2AMessage(ctx, parse(ZMessageSendParams, params)),
          );
        case 'tasks/resubscribe':
          return await stream(
            { app, deps },
            request,
            reply,
            id,
            resubscribeA2ATask(ctx, parse(ZTaskQueryParams, params)),
          );
        case 'tasks/cancel':
          throw new A2AError(
            A2A_ERRORS.taskNotCancelable,
            'a message once posted stays in the space, and a join is the owner’s to decide',
          );
        case 'tasks/pushNotificationConfig/set':
        case 'tasks/pushNotificationConfig/get':
        case 'tasks/pushNotificationConfig/list':
        case 'tasks/pushNotificationConfig/delete':
          throw new A2AError(
            A2A_ERRORS.unsupportedOperation,
            'push notifications: register a webhook instead (POST /hub/space/{spaceId}/webhooks)',
          );
        default:
          throw new A2AError(A2A_ERRORS.methodNotFound, `method not found: ${method}`);
      }
    } catch (error) {
      return sendRaw(reply, { type: 'application/json', body: rpcError(id, asA2AError(error, deps)) });
    }
  };
}

/** The caller: a key that works on the path's space, or the key's own space on /a2a. */
async function contextOf(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  shutdown: AbortSignal,
): Promise<A2AContext> {
  const key = headerValue(request, 'x-private-key') || undefined;
  if (!key) throw new UnauthorizedError('X-Private-Key is required: the agent card’s spaceKey scheme');
  const found = await findKeySpace({ deps, key });
  const pathSpace = (request.params as { spaceId?: string }).spaceId;
  // A key of another space (or of nobody) is refused by the use case's own authorisation.
  if (!found || (pathSpace !== undefined && pathSpace !== found.spaceId))
    throw new UnauthorizedError('unknown key for this space');
  const gone = new AbortController();
  reply.raw.once('close', () => gone.abort());
  return {
    deps,
    key,
    spaceId: found.spaceId,
    role: found.role,
    signal: AbortSignal.any([gone.signal, shutdown]),
  };
}

function parse<T>(
  schema: {
    safeParse(
      v: unknown,
    ):
      | { success: true; data: T }
      | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
  },
  params: unknown,
): T {
  const parsed = schema.safeParse(params);
  if (!parsed.success)
    throw new A2AError(
      A2A_ERRORS.invalidParams,
      `invalid params: ${parsed.error.issues.map((i) => `${i.path.map(String).join('.') || '(params)'}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}

const answer = (reply: FastifyReply, id: unknown, result: unknown) =>
  sendRaw(reply, { type: 'application/json', body: { jsonrpc: '2.0', id, result } });

function rpcError(id: unknown, error: A2AError) {
  return {
    jsonrpc: '2.0',
    id,
    error: { code: error.code, message: error.message, ...(error.data ? { data: error.data } : {}) },
  };
}

/** A refusal of the service as a JSON-RPC error; 401 stays HTTP (thrown to the error handler). */
function asA2AError(error: unknown, deps: Deps): A2AError {
  const refusal = refusalOf(error, deps);
  if (!refusal || refusal.data?.status === 401) throw error;
  return refusal;
}

/** A refusal (a 4xx of the service) as a JSON-RPC error, with its REST status and error in `data`. */
function refusalOf(error: unknown, deps: Deps): A2AError | undefined {
  if (error instanceof A2AError) return error;
  const { status, body } = toHttpError(error, deps.config.publicUrl);
  if (status >= 500) return undefined;
  const code = status === 400 ? A2A_ERRORS.invalidParams : A2A_ERRORS.refused;
  return new A2AError(code, `${status}: ${body.error}`, { ...body, status });
}

/**
 * Writes a task's events as Server-Sent Events: each a JSON-RPC response to the request. It counts
 * among its key's and address's open streams, as the event stream does (decisions.md: 20 per
 * credential, 200 per address, 429 beyond, across every node).
 */
async function stream(
  { app, deps }: Pick<RouteScope, 'app' | 'deps'>,
  request: FastifyRequest,
  reply: FastifyReply,
  id: unknown,
  items: AsyncGenerator<StreamItem>,
): Promise<FastifyReply> {
  // The first item (or a refusal) comes before the stream starts, as a plain JSON-RPC answer.
  const first = await items.next();
  const hub = app.eventHub;
  if (!hub || hub.isClosed) {
    void items.return(undefined);
    throw new ShuttingDownError();
  }
  let release: () => void;
  try {
    release = await admitStream(hub, request);
  } catch (error) {
    void items.return(undefined);
    throw error;
  }
  const res = takeOver(reply);
  res.once('close', release);
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache',
    'X-Accel-Buffering': 'no',
    Connection: 'keep-alive',
  });
  request.raw.socket.setNoDelay(true);
  request.raw.socket.setTimeout(0);
  const write = (result: unknown) => res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result })}\n\n`);
  const ping = setInterval(() => res.write(': ping\n\n'), PING_MS);
  ping.unref();
  res.once('close', () => void items.return(undefined));
  try {
    if (!first.done) write(first.value);
    for await (const item of items) {
      if (res.writableEnded || res.destroyed) break;
      write(item);
    }
  } catch (error) {
    // A refusal on the way (the caller removed, the space closed) as the JSON-RPC error it would
    // have been at the start; anything else is a failure of the service.
    const refusal = refusalOf(error, deps);
    const failure = refusal ?? new A2AError(A2A_ERRORS.internal, 'internal error');
    if (!refusal) request.log.error({ err: error }, 'A2A stream failed');
    if (!res.writableEnded) res.write(`data: ${JSON.stringify(rpcError(id, failure))}\n\n`);
  } finally {
    clearInterval(ping);
    if (!res.writableEnded) res.end();
  }
  return reply;
}
