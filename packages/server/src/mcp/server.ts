import { type OperationContract, operations } from '@convene/contract';
import {
  cancelMcpCall,
  type Deps,
  KeyRequiredError,
  listResources,
  readResource,
  resourceTemplates,
  spaceOfKey,
  subscribeToResource,
  unsubscribeFromResource,
  ValidationError,
  type WriteDeadline,
} from '@convene/core';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { AnyObjectSchema, SchemaOutput } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  CancelledNotificationSchema,
  ErrorCode,
  type InitializeRequest,
  InitializeRequestSchema,
  type InitializeResult,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  type Tool as McpTool,
  ReadResourceRequestSchema,
  type ServerResult,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { idempotencyCaller, sha256 } from '../http/client';
import { toHttpError } from '../http/errors';
import { authorizeReplayOf, type Begun, canonicalJson, type IdempotencyGate } from '../http/idempotency';
import { jsonBodyProblem, NUL_PROBLEM, SURROGATE_PROBLEM } from '../http/json-body';
import { type FailureLog, logFailure } from '../http/log-errors';
import { fixedFieldsOf, misnamed } from '../misnamed';
import { connectionKeyLine, mcpInstructions } from './instructions';
import {
  keyArgument,
  Replayed,
  renameDescriptions,
  type Tool,
  type ToolContext,
  toolJsonSchema,
  toolName,
  toolNamer,
} from './tool';

export interface McpServerOptions {
  deps: Deps;
  /** Aborted when the server shuts down, so long waits end at once. */
  shutdown: AbortSignal;
  tools: readonly Tool[];
  /** The request's Mcp-Session-Id, once checked: resource subscriptions belong to it. */
  sessionId?: string | undefined;
  /** The request's logger: a call's failure (5xx) is logged there, with the request's reqId. */
  log: FailureLog;
  /** Whom the request counts against as an address (Caller.client): work shared out per client. */
  client?: string | undefined;
  /** What tool calls made with an idempotency key need (REST's records, the same rules). */
  idempotency?: McpIdempotency | undefined;
  /**
   * A call's space key at work, as REST's hooks treat a request's: seen (lastSeenAt), and while
   * the call `waits` for news, one of its client's open streams (429 beyond the caps) and kept
   * seen. Resolves with what ends the wait's hold.
   */
  attend?: ((key: string, waits: boolean) => Promise<() => void>) | undefined;
  /**
   * A call of the session that its client may cancel (McpSessionStreams.track, which hears the
   * cancellations every node is told of); none where the process has no event hub.
   */
  track?:
    | ((sessionId: string, requestId: string | number) => { signal: AbortSignal; done: () => void })
    | undefined;
}

/**
 * What a cancelled call answers, if its client still reads the POST (JSON-RPC's "request
 * cancelled", as LSP numbers it; MCP leaves the answer to the server, which must end the POST).
 */
const REQUEST_CANCELLED = -32800;

/**
 * Whether a call may wait for news: list_messages' and get_inbox's `wait`, wait_for_messages'
 * `timeoutSeconds` (REST's long poll is its `wait`).
 */
const waits = (input: unknown): boolean => {
  const { wait, timeoutSeconds } = input as { wait?: unknown; timeoutSeconds?: unknown };
  return Number(wait ?? timeoutSeconds ?? 0) > 0;
};

export interface McpIdempotency {
  gate: IdempotencyGate;
  /** The client's address: an invitation key's records are kept per address, as over REST. */
  ip: string;
  /** The POST's Idempotency-Key header, when it holds one call: that call's key, by default. */
  headerKey: string | undefined;
  /** The request's deadline: answered that it failed (30 s), its write must not commit. */
  deadline: WriteDeadline;
  /** A call's answer is a replay (the header `Idempotency-Replayed`, when there is still time). */
  replayed: () => void;
}

/** Each contract operation by the name of the tool that performs it. */
const operationsByTool = new Map(
  (Object.values(operations) as OperationContract[]).map((operation) => [
    toolName(operation.operationId),
    operation,
  ]),
);

const listings = new WeakMap<readonly Tool[], McpTool[]>();

/** tools/list answers: JSON Schemas are derived once per table, not per request. */
function listingOf(table: readonly Tool[]): McpTool[] {
  let listing = listings.get(table);
  if (!listing) {
    const rename = toolNamer(table.map((tool) => tool.name));
    listing = table.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: rename(tool.description),
      inputSchema: toolJsonSchema(tool.input, 'input') as McpTool['inputSchema'],
      outputSchema: toolJsonSchema(tool.output, 'output') as McpTool['outputSchema'],
      annotations: { title: tool.title, ...tool.annotations },
    }));
    for (const tool of listing) renameDescriptions([tool.inputSchema, tool.outputSchema], rename);
    listings.set(table, listing);
  }
  return listing;
}

const header = (headers: Record<string, string | string[] | undefined> | undefined, name: string) => {
  const value = headers?.[name];
  return (Array.isArray(value) ? value[0] : value) || undefined;
};

/**
 * A fresh MCP server for one HTTP request: what a session needs between requests (its resource
 * subscriptions) is in the database, so any node can answer any request.
 *
 * It is the SDK's low-level `Server` with our own handlers rather than `McpServer.registerTool`,
 * because McpServer validates arguments itself and answers a bad one with a JSON-RPC flavoured
 * message; here a bad argument is a 400 with the message REST gives.
 */
export function createMcpServer({
  deps,
  shutdown,
  tools,
  sessionId,
  log,
  client,
  idempotency,
  attend,
  track,
}: McpServerOptions): Server {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const server = new Server(
    { name: 'convene', title: 'Convene meeting spaces', version: '1.0.0' },
    {
      capabilities: { tools: {}, resources: { subscribe: true } },
      instructions: mcpInstructions(deps.config.publicUrl),
    },
  );

  // The SDK answers initialize itself, after parsing its params with a -32603 for a bad one: the
  // same answer (version negotiation, capabilities, instructions), behind onRequest's check.
  // A connection configured with a key (X-Private-Key) is told which space it is for: every tool
  // but create_space asks for the spaceId, which the key alone does not show the model.
  const initialize = (server as unknown as SdkInitialize)._oninitialize.bind(server);
  onRequest(server, InitializeRequestSchema, async (request, extra) => {
    const result = await initialize(request);
    const key = header(extra.requestInfo?.headers, 'x-private-key');
    // A database that cannot say leaves the instructions as they are (the tools say it then).
    const space = key
      ? await spaceOfKey({ deps, key }).catch((error: unknown) => {
          logFailure(log, 503, error, 'initialize');
          return undefined;
        })
      : undefined;
    return space
      ? { ...result, instructions: `${result.instructions}\n\n${connectionKeyLine(space)}` }
      : result;
  });

  onRequest(server, ListToolsRequestSchema, () => ({ tools: listingOf(tools) }));

  // Each POST has a server of its own, so the call a cancellation names runs under another one,
  // perhaps on another node: every node is told, and the one running it stops it.
  server.setNotificationHandler(CancelledNotificationSchema, async ({ params }) => {
    if (!sessionId || params.requestId === undefined) return;
    await cancelMcpCall({ deps, sessionId, requestId: params.requestId }).catch((error: unknown) =>
      logFailure(log, 503, error, 'notifications/cancelled'),
    );
  });

  onRequest(server, CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new JsonRpcError(ErrorCode.InvalidParams, `unknown tool ${request.params.name}`);
    const headers = extra.requestInfo?.headers;
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    const argKey = keyArgument(args.privateKey);
    const progressToken = request.params._meta?.progressToken;
    const call = sessionId ? track?.(sessionId, extra.requestId) : undefined;
    let leave: (() => void) | undefined;
    try {
      // The HTTP layer left U+0000 and lone surrogates in the arguments to the tool
      // (http/policy.ts): the same 400.
      const problem = jsonBodyProblem(args);
      if (problem === NUL_PROBLEM || problem === SURROGATE_PROBLEM) throw new ValidationError(problem);
      // A key argument that is no string is a malformed argument (400, named), not a missing key.
      if (args.privateKey !== undefined && typeof args.privateKey !== 'string') {
        const message = 'privateKey must be a string: the space key';
        throw new ValidationError(message, { issues: [{ path: ['privateKey'], message }] });
      }
      const key = argKey ?? header(headers, 'x-private-key');
      const userToken = header(headers, 'x-user-token');
      const slip = misnamed(args, argumentNames(tools, tool), 'argument', fixedFieldsOf(tool.name));
      try {
        tool.requireCredential?.({
          key,
          userToken: typeof args.userToken === 'string' && args.userToken ? args.userToken : userToken,
        });
      } catch (error) {
        // A key under another name (`private_key`, `ownerPrivateKey`) is why it is missing.
        throw slip ?? error;
      }
      if (slip) throw slip;
      const input = tool.input.parse(args);
      if (key) leave = await attend?.(key, waits(input));
      const output = await tool.run(input, {
        deps,
        key,
        userToken,
        bearer: undefined,
        client,
        guard: idempotency && guardOf(deps, idempotency, tool.name, key, userToken),
        signal: AbortSignal.any([extra.signal, shutdown, ...(call ? [call.signal] : [])]),
        progress:
          progressToken === undefined
            ? undefined
            : (progress, total, message) =>
                void extra
                  .sendNotification({
                    method: 'notifications/progress',
                    params: { progressToken, progress, ...(total === undefined ? {} : { total }), message },
                  })
                  .catch(() => {}),
      });
      if (output instanceof Replayed) {
        idempotency?.replayed();
        return replayedResult(tool, output);
      }
      // Parsing drops anything the contract does not publish, so no internal field leaks.
      const structuredContent = tool.output.parse(output) as Record<string, unknown>;
      return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent };
    } catch (error) {
      if (call?.signal.aborted)
        throw new JsonRpcError(
          REQUEST_CANCELLED,
          'the call was cancelled: by its client, or its session ended',
        );
      // REST's words (decisions.md: the same message), and where an agent that may not be able to
      // set a header puts its key: the argument.
      const named =
        error instanceof KeyRequiredError
          ? new KeyRequiredError(
              undefined,
              'pass the space key as the privateKey argument (or the X-Private-Key header)',
            )
          : error;
      logFailure(log, toHttpError(named, deps.config.publicUrl).status, error, `tool ${tool.name}`);
      return toolError(named, deps.config.publicUrl);
    } finally {
      call?.done();
      leave?.();
    }
  });

  // Resources: a space's transcript and its artifacts. The key is a `privateKey` param beside the
  // uri (as tools take it as an argument; the method's schema does not keep it, so it is read from
  // the request as sent), else the connection's X-Private-Key.
  const keyOf = (extra: RequestExtra, sent: SentRequest) => {
    return keyArgument(sent.params?.privateKey) ?? header(extra.requestInfo?.headers, 'x-private-key');
  };
  onRequest(server, ListResourcesRequestSchema, async (_request, extra, sent) => ({
    resources: await resourceCall(deps, log, () => listResources({ deps, key: keyOf(extra, sent) })),
  }));
  onRequest(server, ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: resourceTemplates.map((template) => ({ ...template })),
  }));
  onRequest(server, ReadResourceRequestSchema, async (request, extra, sent) => ({
    contents: [
      await resourceCall(deps, log, () =>
        readResource({ deps, key: keyOf(extra, sent), uri: request.params.uri }),
      ),
    ],
  }));
  onRequest(server, SubscribeRequestSchema, async (request, extra, sent) => {
    if (!sessionId) throw noSession();
    await resourceCall(deps, log, () =>
      subscribeToResource({ deps, key: keyOf(extra, sent), sessionId, uri: request.params.uri }),
    );
    return {};
  });
  onRequest(server, UnsubscribeRequestSchema, async (request) => {
    if (!sessionId) throw noSession();
    await resourceCall(deps, log, () =>
      unsubscribeFromResource({ deps, sessionId, uri: request.params.uri }),
    );
    return {};
  });

  return server;
}

/**
 * A JSON-RPC error as the SDK's Server puts it on the wire: its `code`, `message` and `data`. Not
 * the SDK's McpError, whose constructor writes "MCP error <code>: " into the message itself, so
 * that the wire carried the prefix and a client's McpError added it a second time.
 */
class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** The SDK Server's own initialize handler (not public API; see createMcpServer). */
type SdkInitialize = { _oninitialize(request: InitializeRequest): Promise<InitializeResult> };

type RequestExtra = Parameters<Parameters<Server['setRequestHandler']>[1]>[1];
/** A request as the client sent it, before its method's schema dropped what it does not name. */
type SentRequest = { params?: Record<string, unknown> };

/**
 * The SDK Protocol's setRequestHandler, beneath Server's (not public API): Server wraps a tools/call
 * handler in its own check of the params, which throws an McpError (see JsonRpcError), and checks
 * our result again; onRequest checks the params itself.
 */
const setRequestHandler: Server['setRequestHandler'] = Object.getPrototypeOf(
  Server.prototype,
).setRequestHandler;

/**
 * Registers a request handler whose params are checked by the method's schema with a JSON-RPC
 * -32602 (invalid params) for a mismatch. The SDK parses them before any handler runs and turns
 * its own validation failure into -32603 (internal error), which tells a client the server broke.
 */
function onRequest<T extends AnyObjectSchema>(
  server: Server,
  schema: T,
  handler: (
    request: SchemaOutput<T>,
    extra: RequestExtra,
    sent: SentRequest,
  ) => ServerResult | Promise<ServerResult>,
): void {
  const strict = schema as unknown as z.ZodObject<{ method: z.ZodLiteral<string> }>;
  setRequestHandler.call(server, z.looseObject({ method: strict.shape.method }), (request, extra) => {
    const parsed = strict.safeParse(request);
    if (!parsed.success)
      throw new JsonRpcError(ErrorCode.InvalidParams, `invalid params: ${z.prettifyError(parsed.error)}`);
    return handler(parsed.data as SchemaOutput<T>, extra, request as SentRequest);
  });
}

const noSession = () =>
  new JsonRpcError(
    ErrorCode.InvalidRequest,
    'resource subscriptions belong to a session: send initialize first and then its Mcp-Session-Id header',
  );

/**
 * The JSON-RPC code of a refused resource call: the MCP specification's -32002 for a resource that
 * is not there, invalid params for a uri that names none (400), invalid request for the rest (a
 * key refused, a closed space); the REST status and error travel in the error's data.
 */
const RESOURCE_NOT_FOUND = -32002;
function resourceErrorCode(status: number): number {
  if (status === 404) return RESOURCE_NOT_FOUND;
  return status === 400 ? ErrorCode.InvalidParams : ErrorCode.InvalidRequest;
}

/**
 * A resource call's DomainError as a JSON-RPC error carrying the REST status and message; a
 * failure (5xx) is logged on the request's logger and left to the SDK (-32603, internal error).
 */
async function resourceCall<T>(deps: Deps, log: FailureLog, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const { status, body } = toHttpError(error, deps.config.publicUrl);
    logFailure(log, status, error, 'resource call');
    if (status >= 500) throw error;
    throw new JsonRpcError(resourceErrorCode(status), `${status}: ${body.error}`, { ...body, status });
  }
}

const argumentNamesOf = new WeakMap<readonly Tool[], Map<string, readonly string[]>>();

/** The arguments a tool of `table` takes, as its listing publishes them (listingOf). */
function argumentNames(table: readonly Tool[], tool: Tool): readonly string[] {
  let byTool = argumentNamesOf.get(table);
  if (!byTool) {
    byTool = new Map(
      listingOf(table).map((listed) => [listed.name, Object.keys(listed.inputSchema.properties ?? {})]),
    );
    argumentNamesOf.set(table, byTool);
  }
  return byTool.get(tool.name) ?? [];
}

/**
 * The guard of a tool's calls (ToolContext.guard): its records are REST's, kept for the credential
 * the call presents (a user token where it has no space key), under the tool's name rather than a
 * path, and its request is the tool's name and arguments without credentials.
 */
function guardOf(
  deps: Deps,
  { gate, ip, headerKey, deadline }: McpIdempotency,
  toolName: string,
  key: string | undefined,
  userToken: string | undefined,
): ToolContext['guard'] {
  return async (idempotencyKey, args): Promise<Begun | undefined> => {
    const chosen = idempotencyKey ?? headerKey;
    const credential = key ?? userToken;
    // Anonymous calls are never replayed, as over REST: no caller to keep the record for.
    if (chosen === undefined || credential === undefined) return undefined;
    const caller = idempotencyCaller(credential, ip, userToken);
    const scope = sha256(['MCP', toolName, caller, chosen].join('\n'));
    // The operation the tool performs: its credential must still work for a replay, as over REST.
    const operation = operationsByTool.get(toolName);
    const spaceId = (args as { spaceId?: unknown } | undefined)?.spaceId;
    return gate(
      scope,
      sha256(canonicalJson(args)),
      deadline,
      operation &&
        (() =>
          authorizeReplayOf(deps, operation, {
            spaceId: typeof spaceId === 'string' ? spaceId : undefined,
            key,
            bearer: undefined,
          })),
    );
  };
}

/**
 * A call's answer recorded under its idempotency key, given again: the result it had (a refusal
 * as the tool error it was), marked `convene/idempotentReplay` in `_meta`.
 */
function replayedResult(tool: Tool, { response }: Replayed): CallToolResult {
  const marked = { 'convene/idempotentReplay': true };
  const body = response.body === '' ? {} : (JSON.parse(response.body) as Record<string, unknown>);
  if (response.status >= 400) return errorResult(response.status, body as { error: unknown }, marked);
  const structuredContent = tool.output.parse(body) as Record<string, unknown>;
  return {
    content: [{ type: 'text', text: JSON.stringify(structuredContent) }],
    structuredContent,
    _meta: marked,
  };
}

/**
 * A DomainError (or a validation failure) as a tool result with the status and message REST
 * answers. No structuredContent: clients check it against the tool's output schema even on
 * errors, so the machine-readable `{error, code, status, ...details}` travels in `_meta`; the
 * text also carries the details (the code among them) after the message.
 */
export function toolError(error: unknown, publicUrl: string): CallToolResult {
  const { status, body } = toHttpError(error, publicUrl);
  return errorResult(status, body);
}

/** An error answer (`{error, ...details}`, REST's body) of `status` as a tool result (toolError). */
function errorResult(
  status: number,
  body: { error: unknown; [detail: string]: unknown },
  meta: Record<string, unknown> = {},
): CallToolResult {
  const { error: message, ...details } = body;
  const extra = Object.keys(details).length > 0 ? ` ${JSON.stringify(details)}` : '';
  return {
    isError: true,
    content: [{ type: 'text', text: `${status}: ${String(message)}${extra}` }],
    _meta: { 'convene/error': { ...body, status }, ...meta },
  };
}
