import type { Deps } from '@convene/core';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import { toHttpError } from '../http/errors';
import { mcpInstructions } from './instructions';
import { type SpaceWatch, type Tool, toolJsonSchema } from './tool';

export interface McpServerOptions {
  deps: Deps;
  /** Aborted when the server shuts down, so long waits end at once. */
  shutdown: AbortSignal;
  /** Wakes wait_for_messages when a message is committed (the process's event hub). */
  watch?: SpaceWatch | undefined;
  /** The tool table, derived from the operation declarations (mcp/tools.ts). */
  tools: readonly Tool[];
}

const listings = new WeakMap<readonly Tool[], McpTool[]>();

/** tools/list answers: JSON Schemas are derived once per table, not per request. */
function listingOf(table: readonly Tool[]): McpTool[] {
  let listing = listings.get(table);
  if (!listing) {
    listing = table.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: toolJsonSchema(tool.input, 'input') as McpTool['inputSchema'],
      outputSchema: toolJsonSchema(tool.output, 'output') as McpTool['outputSchema'],
      annotations: { title: tool.title, ...tool.annotations },
    }));
    listings.set(table, listing);
  }
  return listing;
}

const header = (headers: Record<string, string | string[] | undefined> | undefined, name: string) => {
  const value = headers?.[name];
  return (Array.isArray(value) ? value[0] : value) || undefined;
};

/**
 * A fresh MCP server for one HTTP request (stateless, so any node can answer any request).
 *
 * It is the SDK's low-level `Server` with our own tools/list and tools/call handlers rather than
 * `McpServer.registerTool`, because McpServer validates arguments itself and answers a bad one
 * with a JSON-RPC flavoured message; here a bad argument is a 400 with the message REST gives.
 */
export function createMcpServer({ deps, shutdown, watch, tools }: McpServerOptions): Server {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const server = new Server(
    { name: 'convene', title: 'Convene meeting spaces', version: '1.0.0' },
    { capabilities: { tools: {} }, instructions: mcpInstructions(deps.config.publicUrl) },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listingOf(tools) }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${request.params.name}`);
    const headers = extra.requestInfo?.headers;
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    const argKey = typeof args.privateKey === 'string' && args.privateKey ? args.privateKey : undefined;
    try {
      const input = tool.input.parse(args);
      const output = await tool.run(input, {
        deps,
        key: argKey ?? header(headers, 'x-private-key'),
        userToken: header(headers, 'x-user-token'),
        bearer: undefined,
        signal: AbortSignal.any([extra.signal, shutdown]),
        watch,
      });
      // Parsing drops anything the contract does not publish, so no internal field leaks.
      const structuredContent = tool.output.parse(output) as Record<string, unknown>;
      return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent };
    } catch (error) {
      return toolError(error, deps.config.publicUrl);
    }
  });

  return server;
}

/**
 * A DomainError (or a validation failure) as a tool result with the status and message REST
 * answers. No structuredContent: clients check it against the tool's output schema even on
 * errors, so the machine-readable `{error, status, ...details}` travels in `_meta`.
 */
export function toolError(error: unknown, publicUrl: string): CallToolResult {
  const { status, body } = toHttpError(error, publicUrl);
  const { error: message, ...details } = body;
  const extra = Object.keys(details).length > 0 ? ` ${JSON.stringify(details)}` : '';
  return {
    isError: true,
    content: [{ type: 'text', text: `${status}: ${message}${extra}` }],
    _meta: { 'convene/error': { ...body, status } },
  };
}
