import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../test/helpers';
import { depthOf, hasNul, RUNS, selected, Tally } from './checks';
import { type Fixture, headerSafe, makeFixture, namedValue, spaceKey, wantsPrivateSpace } from './fixture';
import { hostileString, type Schema, SchemaArbitraries } from './schema-arbitrary';

/**
 * Schema-driven fuzzing of every MCP tool, through `tools/call` on /mcp, with arguments built
 * from the input schema tools/list publishes (the REST fuzz test sees /mcp only as one operation
 * taking any object). A call must answer HTTP 200 with a JSON-RPC response (or the HTTP layer's
 * 400 `{error}` for a body holding U+0000 or nested too deep); a tool error must
 * carry a status below 500 (`_meta["convene/error"]`), a JSON-RPC error must not be an internal
 * one; arguments the schema (or decisions.md) calls invalid must never succeed; and a success's
 * structuredContent must match the tool's output schema.
 */
const { srv, h } = useServer({ config: { rateLimitMax: 1_000_000_000 } });

interface McpTool {
  name: string;
  inputSchema: Schema;
  outputSchema?: Schema;
}

/** Tool calls are heavier than REST requests (a fresh MCP server each), so a third of the runs. */
const TOOL_RUNS = Math.max(1, Math.round(RUNS / 3));
const tally = new Tally();
let tools: McpTool[] = [];
const ajv = new Ajv({ strict: false, validateFormats: true });
addFormats.default(ajv);
let callId = 0;

async function rpc(
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; text: string }> {
  const res = await fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers: {
      ...headers,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

beforeAll(async () => {
  const listed = await rpc({}, { jsonrpc: '2.0', id: 0, method: 'tools/list' });
  tools = (JSON.parse(listed.text) as { result: { tools: McpTool[] } }).result.tools;
});

afterAll(() => console.log(tally.summary('MCP', TOOL_RUNS)));

function args(tool: McpTool, f: Fixture): fc.Arbitrary<Record<string, unknown>> {
  const named = (name: string): fc.Arbitrary<unknown> | undefined => {
    if (name === 'privateKey') return spaceKey(f);
    if (name === 'userToken') return fc.oneof(fc.constant(f.userToken), hostileString.map(headerSafe));
    // A long poll with nothing to wait for would hold each run for its default 25 s.
    if (name === 'timeoutSeconds') return fc.constantFrom(0, 0.05, -1, 56, 'x');
    // Versions are numbers here, not path segments.
    if (name === 'version' || name === 'from' || name === 'to')
      return fc.oneof(fc.constantFrom(1, 2, 3), fc.constantFrom(0, -1, 1.5, 2 ** 31, 2 ** 53, '1'));
    return namedValue(name, f);
  };
  const arbitraries = new SchemaArbitraries({}, named);
  return arbitraries
    .of(tool.inputSchema)
    .filter(
      (value): value is Record<string, unknown> =>
        typeof value === 'object' && value !== null && !Array.isArray(value),
    );
}

/** The connection's own credentials, which tools read when an argument does not give one. */
function connection(f: Fixture, linking: boolean): fc.Arbitrary<Record<string, string>> {
  return fc.oneof(
    fc.constant({}),
    spaceKey(f).map((key) => ({ 'X-Private-Key': key })),
    ...(linking ? [fc.constant({ 'X-User-Token': f.userToken })] : []),
  );
}

interface Answer {
  status: number;
  text: string;
}

function check(tool: McpTool, sent: Record<string, unknown>, res: Answer): string | null {
  // The HTTP layer refuses a body holding U+0000 or nested past 64 levels before MCP reads it.
  if (res.status === 400 && typeof (JSON.parse(res.text) as { error?: unknown }).error === 'string')
    return null;
  if (res.status !== 200) return `HTTP ${res.status}: ${res.text.slice(0, 200)}`;
  const message = JSON.parse(res.text) as {
    result?: { isError?: boolean; structuredContent?: unknown; _meta?: Record<string, { status?: unknown }> };
    error?: { code: number; message: string };
  };
  const invalid = !ajv.validate(tool.inputSchema, sent)
    ? `arguments: ${ajv.errorsText(ajv.errors)}`
    : hasNul(sent)
      ? 'U+0000'
      : depthOf(sent) > 64
        ? 'nesting'
        : null;
  if (message.error) {
    // -32603 is JSON-RPC's internal error: the MCP layer's 500.
    if (message.error.code === -32603) return `internal error: ${message.error.message}`;
    return null;
  }
  const result = message.result;
  if (!result) return `neither result nor error: ${res.text.slice(0, 200)}`;
  if (result.isError) {
    const status = result._meta?.['convene/error']?.status;
    if (typeof status !== 'number') return `tool error without a status: ${res.text.slice(0, 200)}`;
    if (status >= 500) return `tool error ${status}: ${res.text.slice(0, 200)}`;
    return null;
  }
  if (invalid) return `invalid call (${invalid}) succeeded`;
  if (tool.outputSchema && !ajv.validate(tool.outputSchema, result.structuredContent))
    return `structuredContent does not match the output schema: ${ajv.errorsText(ajv.errors)}`;
  return null;
}

describe('every MCP tool, fuzzed through tools/call', () => {
  it('lists the tools it fuzzes', () => {
    expect(tools.length).toBeGreaterThanOrEqual(25);
  });

  it('answers no internal error, tool errors with a status below 500, and never a success to invalid arguments', async () => {
    for (const tool of tools.filter((t) => selected(t.name))) {
      // Only the tools that make a key can link it to a human (X-User-Token).
      const linking = ['create_space', 'join_space'].includes(tool.name);
      const fixture = await makeFixture(h, wantsPrivateSpace(tool.name) ? 'private' : 'public', linking);
      const calls = fc.tuple(args(tool, fixture), connection(fixture, linking));
      await tally.fuzz(tool.name, calls, TOOL_RUNS, async ([sent, headers]) => {
        callId += 1;
        const res = await rpc(headers, {
          jsonrpc: '2.0',
          id: callId,
          method: 'tools/call',
          params: { name: tool.name, arguments: sent },
        });
        const problem = check(tool, sent, res);
        // A tool error's status is the call's status as far as the tally goes.
        const toolStatus = Number(/"status":(\d{3})/.exec(res.text)?.[1] ?? res.status);
        return { status: res.status === 200 ? toolStatus : res.status, problem, sent: JSON.stringify(sent) };
      });
    }
    expect(tally.failures).toEqual([]);
    expect(tally.serverErrors).toBe(0);
  }, 3_600_000);
});
