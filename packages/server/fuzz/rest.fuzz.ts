import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../test/helpers';
import { depthOf, hasNul, RUNS, selected, Tally, wellFormed } from './checks';
import { credentials, type Fixture, headerSafe, makeFixture, namedValue, wantsPrivateSpace } from './fixture';
import { deref, hostileString, type Schema, SchemaArbitraries } from './schema-arbitrary';

/**
 * Schema-driven fuzzing of every operation /openapi.json describes (fast-check, a fixed seed and
 * a bounded number of runs per operation): requests built from each operation's own parameter
 * and body schemas, mostly valid, mixed with hostile values, wrong types, bodies that are not
 * objects, deep nesting and bad credentials. Every answer must be below 500 and one the document
 * declares for the operation; every error must be JSON `{error}`; every JSON success must match
 * its documented schema; and nothing the document (or decisions.md: U+0000, nesting) calls
 * invalid may be answered with a success.
 */
const { srv, h } = useServer({ config: { rateLimitMax: 1_000_000_000 } });

interface Operation {
  method: string;
  path: string;
  operationId: string;
  parameters: { in: string; name: string; required?: boolean; schema: Schema }[];
  body?: Schema;
  security: string[];
  /** Documented statuses, with the schema of each JSON answer. */
  responses: Map<number, Schema | undefined>;
}

type JsonContent = { content?: Record<string, { schema?: Schema }> };

/** What the fuzz test reads of an operation in /openapi.json. */
interface DocumentedOperation {
  operationId: string;
  parameters?: (Operation['parameters'][number] & { $ref?: string })[];
  requestBody?: JsonContent;
  responses?: Record<string, JsonContent>;
  security?: Record<string, unknown>[];
}

const tally = new Tally();
const operations: Operation[] = [];
let components: Record<string, Schema> = {};
const ajv = new Ajv2020({ strict: false, validateFormats: true });
// Path and query parameters are text on the wire: `2` is the integer 2.
const ajvParams = new Ajv2020({ strict: false, coerceTypes: true, validateFormats: true });
for (const instance of [ajv, ajvParams]) addFormats.default(instance);

beforeAll(async () => {
  const doc = (await (await fetch(`${srv.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, DocumentedOperation>>;
    components: { schemas: Record<string, Schema> };
  };
  components = doc.components.schemas;
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const raw = op.requestBody?.content?.['application/json']?.schema as Schema | undefined;
      const responses = new Map<number, Schema | undefined>();
      for (const [status, answer] of Object.entries(op.responses ?? {})) {
        const schema = answer.content?.['application/json']?.schema;
        responses.set(Number(status), schema ? (deref(schema, components) as Schema) : undefined);
      }
      operations.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId,
        parameters: (op.parameters ?? [])
          .filter((p) => !p.$ref)
          .map((p) => ({
            ...p,
            schema: deref(p.schema, components) as Schema,
          })),
        ...(raw ? { body: deref(raw, components) as Schema } : {}),
        security: (op.security ?? []).flatMap((s) => Object.keys(s)),
        responses,
      });
    }
  }
});

afterAll(() => console.log(tally.summary('REST', RUNS)));

/** Values no schema produces: bodies that are not objects, nesting past 64 levels, raw text. */
const badBody = fc.constantFrom<{ raw: string }>(
  { raw: '[]' },
  { raw: '42' },
  { raw: '"text"' },
  { raw: 'null' },
  { raw: '{"name":' },
  { raw: `${'{"a":'.repeat(100)}1${'}'.repeat(100)}` },
  { raw: '['.repeat(5000) + ']'.repeat(5000) },
);

interface Sent {
  url: string;
  init: RequestInit;
  /** Why the document (or decisions.md) calls this request invalid, if it does. */
  invalid: string | null;
}

/** Bodies a non-object is right for: a JSON-RPC batch of at least one call. */
const isBatch = (op: Operation, value: unknown): boolean =>
  op.operationId === 'mcp' && Array.isArray(value) && value.length > 0;

function request(op: Operation, f: Fixture): fc.Arbitrary<Sent> {
  const arbitraries = new SchemaArbitraries(components, (name) => namedValue(name, f));
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query' && p.name !== 'key');
  const path = fc.record(
    Object.fromEntries(pathParams.map((p) => [p.name, namedValue(p.name, f) ?? fc.uuid()])),
  );
  const query = fc.record(
    Object.fromEntries(
      queryParams.map((p) => [p.name, fc.option(arbitraries.of(p.schema), { nil: undefined })]),
    ),
    { requiredKeys: [] },
  );
  const body = op.body
    ? fc.oneof(
        { arbitrary: arbitraries.of(op.body).map((value) => ({ value })), weight: 8 },
        { arbitrary: badBody, weight: 1 },
      )
    : fc.constant(undefined);
  const extra = fc.record(
    {
      'Idempotency-Key': fc.oneof(fc.uuid(), fc.constant('k'.repeat(256))),
      'X-Poll-Token': fc.oneof(fc.constant(f.pollToken), hostileString.map(headerSafe)),
      'API-Version': fc.constantFrom('1', '2', ''),
    },
    { requiredKeys: [] },
  );
  const creds = credentials(f, {
    spaceKey: op.security.includes('spaceKey'),
    jwt: op.security.includes('dashboardJwt'),
    // createSpace and joinSpace link the new key to the human whose token comes with them.
    userToken: op.security.includes('userToken') || ['createSpace', 'joinSpace'].includes(op.operationId),
  });
  return fc.tuple(path, query, body, creds, extra).map(([p, q, b, headers, more]) => {
    let problem: string | null = null;
    const url = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = wellFormed(String(p[name]));
      if (!ajvParams.validate(pathParams.find((x) => x.name === name)!.schema, value))
        problem ??= `path ${name}`;
      return encodeURIComponent(value);
    });
    const search = new URLSearchParams();
    for (const param of queryParams) {
      const value = q[param.name];
      if (value === undefined) {
        if (param.required) problem ??= `missing query ${param.name}`;
        continue;
      }
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      search.set(param.name, text);
      if (!ajvParams.validate(param.schema, text) || text.includes('\u0000'))
        problem ??= `query ${param.name}`;
    }
    const sentHeaders: Record<string, string> = { ...headers };
    for (const [name, value] of Object.entries(more))
      if (value !== undefined) sentHeaders[name] = String(value);
    if (sentHeaders['API-Version'] !== undefined && sentHeaders['API-Version'] !== '1')
      problem ??= 'API-Version';
    if (op.method !== 'GET' && (sentHeaders['Idempotency-Key']?.length ?? 0) > 255)
      problem ??= 'Idempotency-Key';
    const init: RequestInit = { method: op.method, headers: sentHeaders };
    if (b !== undefined) {
      sentHeaders['Content-Type'] = 'application/json';
      const value: unknown = 'raw' in b ? safeParse(b.raw) : b.value;
      init.body = 'raw' in b ? b.raw : JSON.stringify(b.value);
      if (value === undefined) problem ??= 'not JSON';
      else if (depthOf(value) > 64) problem ??= 'nesting';
      else if ((typeof value !== 'object' || value === null || Array.isArray(value)) && !isBatch(op, value))
        problem ??= 'body not an object';
      else if (!isBatch(op, value) && !ajv.validate(op.body!, value)) problem ??= 'body schema';
      else if (hasNul(value)) problem ??= 'U+0000';
    }
    if (op.operationId === 'mcp') sentHeaders.Accept = 'application/json, text/event-stream';
    return { url: `${url}${search.size ? `?${search}` : ''}`, init, invalid: problem };
  });
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Whether fetch failed as a kept-alive connection closed under a request does (ECONNRESET). */
const resetUnder = (error: unknown): boolean =>
  error instanceof TypeError &&
  /ECONNRESET|UND_ERR_SOCKET/.test(String((error.cause as { code?: string })?.code));

async function send(sent: Sent): Promise<{ status: number; type: string; text: string }> {
  const controller = new AbortController();
  const request = () => fetch(`${srv.url}${sent.url}`, { ...sent.init, signal: controller.signal });
  // Sent once more on a reset: an idle connection the server let go (Node's 5 s keep-alive) as
  // fetch reused it, on a loaded machine (CI once failed the first request so). A request the
  // server itself resets is reset again, and fails the run as before.
  const res = await request().catch((error: unknown) => {
    if (resetUnder(error)) return request();
    throw error;
  });
  const type = res.headers.get('content-type') ?? '';
  // An event stream never ends by itself: its status and headers are the answer.
  if (type.includes('text/event-stream')) {
    controller.abort();
    return { status: res.status, type, text: '' };
  }
  return { status: res.status, type, text: await res.text() };
}

/** Operations that read a human's credentials, or that link what they make to one. */
const needsAccount = (op: Operation): boolean =>
  op.security.some((scheme) => scheme !== 'spaceKey') ||
  ['createSpace', 'joinSpace'].includes(op.operationId) ||
  /^\/hub\/(me|link)\//.test(op.path);

/**
 * Statuses any operation may answer though few declare them: 400 for a bad header or a U+0000 in
 * the URL; 431 from Node's HTTP parser when the headers pass 16 KiB, before any route runs.
 */
const ANYWHERE = new Set([400, 431]);

function check(
  op: Operation,
  sent: Sent,
  res: { status: number; type: string; text: string },
): string | null {
  if (res.status >= 500) return `${res.status} ${res.text.slice(0, 200)}`;
  if (!op.responses.has(res.status) && !ANYWHERE.has(res.status))
    return `status ${res.status} is not documented: ${res.text.slice(0, 100)}`;
  const json = res.type.includes('json');
  const body = json ? safeParse(res.text) : undefined;
  if (json && res.text !== '' && body === undefined)
    return `${res.status} body does not parse: ${res.text.slice(0, 100)}`;
  if (res.status >= 400) {
    if (!json) return `error ${res.status} is not JSON (${res.type})`;
    // /mcp included: its JSON-RPC errors travel in 200 answers, its refusals as {error} like any other.
    const error = (body as { error?: unknown } | undefined)?.error;
    if (typeof error !== 'string') return `error ${res.status} without {error}: ${res.text.slice(0, 100)}`;
    // Its documented body, else the shared Error (a status every route may answer): `code` included.
    const schema = op.responses.get(res.status) ?? (deref(components.Error, components) as Schema);
    if (!ajv.validate(schema, body))
      return `error ${res.status} does not match its schema: ${ajv.errorsText(ajv.errors)} in ${res.text.slice(0, 200)}`;
    return null;
  }
  if (sent.invalid) return `invalid request (${sent.invalid}) answered ${res.status}`;
  const schema = op.responses.get(res.status);
  if (json && schema && !ajv.validate(schema, body))
    return `${res.status} body does not match its schema: ${ajv.errorsText(ajv.errors)} in ${res.text.slice(0, 200)}`;
  return null;
}

describe('every operation of /openapi.json, fuzzed', () => {
  it('lists the operations it fuzzes', () => {
    expect(operations.length).toBeGreaterThanOrEqual(50);
  });

  it('answers no 5xx, documented statuses, errors as JSON {error, code, …} as documented, and never a success to an invalid request', async () => {
    for (const op of operations.filter((o) => selected(o.operationId))) {
      const privacy = wantsPrivateSpace(op.operationId) ? 'private' : 'public';
      const fixture = await makeFixture(h, privacy, needsAccount(op));
      await tally.fuzz(op.operationId, request(op, fixture), RUNS, async (sent) => {
        const res = await send(sent);
        const body = String(sent.init.body).slice(0, 120);
        return {
          status: res.status,
          problem: check(op, sent, res),
          sent: `${sent.init.method} ${sent.url} | body ${body}`,
        };
      });
    }
    expect(tally.failures).toEqual([]);
    expect(tally.serverErrors).toBe(0);
  }, 3_600_000);
});
