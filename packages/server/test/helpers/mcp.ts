import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';

/** The official MCP client connected to `/mcp`, optionally sending headers on every request. */
export async function connectMcp(baseUrl: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'convene-tests', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), {
    requestInit: { headers },
  });
  await client.connect(transport);
  return client;
}

/** Calls a tool that must succeed and returns its structured result. */
export async function callOk<T = any>(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy();
  expect(result.structuredContent).toBeDefined();
  // The text block carries the same JSON for hosts that only read text.
  const first = result.content[0];
  expect(first?.type).toBe('text');
  expect(JSON.parse((first as { text: string }).text)).toEqual(result.structuredContent);
  return result.structuredContent as T;
}

/** Calls a tool that must fail with the given REST status; returns the error body. */
export async function callError(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  status: number,
): Promise<{ error: string; status: number } & Record<string, any>> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError, `${name} should fail: ${JSON.stringify(result.content)}`).toBe(true);
  const text = (result.content[0] as { text: string }).text;
  expect(text).toMatch(new RegExp(`^${status}: `));
  const body = (result._meta as Record<string, any>)['convene/error'];
  expect(body.status).toBe(status);
  expect(text.startsWith(`${status}: ${body.error}`)).toBe(true);
  // The code too, for an agent that reads only the text.
  expect(text).toContain(`"code":"${body.code}"`);
  return body;
}
