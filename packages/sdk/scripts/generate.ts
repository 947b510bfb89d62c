/**
 * Writes src/generated.ts from @convene/contract: every schema the REST operations, the stream
 * events and webhook deliveries use, printed as plain TypeScript (through z.toJSONSchema, the contract's public
 * JSON Schema form), and the route table the client needs at run time (method, path, path
 * parameters, replayability, response kind). The SDK then ships no zod and no contract code.
 *
 * `pnpm --filter @convene/sdk generate` rewrites the file; test/unit/generated.test.ts fails
 * when it is stale and test/generated-types.test-d.ts checks the printed types against z.infer.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  limits,
  type OperationContract,
  operations,
  pathParams,
  streamEventSchemas,
  ZClientKnownErrorCode,
  ZError,
  ZWebhookPayload,
} from '@convene/contract';
import { z } from 'zod';

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
export const generatedPath = join(packageRoot, 'src/generated.ts');

type Io = 'input' | 'output';
// JSON Schema as z.toJSONSchema prints it: the subset below is all the printer needs to read.
interface Json {
  $ref?: string;
  $defs?: Record<string, Json>;
  type?: string | string[];
  properties?: Record<string, Json>;
  required?: string[];
  additionalProperties?: boolean | Json;
  items?: Json;
  prefixItems?: Json[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Json[];
  oneOf?: Json[];
  allOf?: Json[];
  description?: string;
  default?: unknown;
  format?: string;
}

/** Names a schema id takes in TypeScript where the id itself would shadow a global. */
const RENAMED: Record<string, string> = { Error: 'ErrorBody' };

/**
 * Operations whose SDK method takes options of its own rather than the REST input: messages.list()
 * and stream() take `since` (the query's `timestamp`), inbox.ack() a seq, artifacts.diff() two
 * numbers. Their inputs are written out in OperationTypes, for the transport, rather than named
 * and exported: nobody imports the REST shape and hands it to the method, where it would compile
 * and be ignored.
 */
const WRAPPED_INPUTS = new Set(['listMessages', 'streamMessages', 'ackInbox', 'diffArtifactVersions']);

const pascal = (name: string) => name[0]!.toUpperCase() + name.slice(1);
const isIdentifier = (name: string) => /^[A-Za-z_$][\w$]*$/.test(name);

function docComment(lines: (string | undefined)[], indent: string): string {
  const text = lines.filter((line): line is string => Boolean(line)).flatMap((line) => line.split('\n'));
  if (text.length === 0) return '';
  const safe = text.map((line) => line.replaceAll('*/', '*\\/'));
  if (safe.length === 1) return `${indent}/** ${safe[0]} */\n`;
  return `${indent}/**\n${safe.map((line) => `${indent} * ${line}`).join('\n')}\n${indent} */\n`;
}

class Printer {
  /** Printed declarations by type name, in the order first met. */
  readonly declarations = new Map<string, string>();
  /** The JSON of each named schema met, by `${io}:${id}`, to tell input and output shapes apart. */
  private readonly defs = new Map<string, Json>();

  /** Converts a zod schema and returns the TypeScript type expression naming it. */
  typeOf(schema: z.ZodType, io: Io): string {
    const json = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Json;
    for (const [id, def] of Object.entries(json.$defs ?? {})) this.defs.set(`${io}:${id}`, def);
    for (const [id] of Object.entries(json.$defs ?? {})) this.declare(id, io);
    return this.print(json, io, '');
  }

  /** An interface (or alias) for an anonymous object schema, under a name of our choosing. */
  declareAnonymous(name: string, json: Json, io: Io, description?: string): string {
    const body = this.print(json, io, '');
    const doc = docComment([description ?? json.description], '');
    const isObject = body.startsWith('{');
    this.declarations.set(
      name,
      isObject ? `${doc}export interface ${name} ${body}\n` : `${doc}export type ${name} = ${body};\n`,
    );
    return name;
  }

  /** The type of an anonymous schema, written out where it is used rather than named. */
  inline(json: Json, io: Io, indent: string): string {
    return this.print(json, io, indent);
  }

  /** The TypeScript name of a schema id as seen in one direction. */
  private nameOf(id: string, io: Io): string {
    const base = RENAMED[id] ?? id;
    if (io === 'output') return base;
    const output = this.defs.get(`output:${id}`);
    const input = this.defs.get(`input:${id}`);
    // A schema with defaults reads differently on the way in: it gets its own name then.
    return output && input && JSON.stringify(output) !== JSON.stringify(input) ? `${base}Input` : base;
  }

  private declare(id: string, io: Io): void {
    const name = this.nameOf(id, io);
    if (this.declarations.has(name)) return;
    this.declarations.set(name, ''); // reserve the slot: the order stays the order of first use
    const def = this.defs.get(`${io}:${id}`)!;
    this.declareAnonymous(name, def, io);
  }

  print(json: Json, io: Io, indent: string): string {
    if (json.$ref) {
      const id = json.$ref.replace(/^#\/\$defs\//, '');
      return this.nameOf(id, io);
    }
    if (json.const !== undefined) return JSON.stringify(json.const);
    if (json.enum) return json.enum.map((value) => JSON.stringify(value)).join(' | ');
    const union = json.anyOf ?? json.oneOf;
    if (union) {
      // An open enum (known values, or any other string: ErrorCode) keeps its known values in
      // the type: `string & {}` does not swallow them, so editors still complete them.
      const open = union.some((member) => this.isStringEnum(member, io));
      return union
        .map((member) => (open && isPlainString(member) ? '(string & {})' : this.print(member, io, indent)))
        .join(' | ');
    }
    if (json.allOf) return json.allOf.map((member) => this.print(member, io, indent)).join(' & ');
    if (Array.isArray(json.type))
      return json.type.map((type) => this.print({ ...json, type }, io, indent)).join(' | ');
    switch (json.type) {
      case 'string':
        return 'string';
      case 'integer':
      case 'number':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'null':
        return 'null';
      case 'array': {
        if (json.prefixItems)
          return `[${json.prefixItems.map((item) => this.print(item, io, indent)).join(', ')}]`;
        const item = json.items ? this.print(json.items, io, indent) : 'unknown';
        return /^[\w.]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
      }
      case 'object':
        return this.printObject(json, io, indent);
      default:
        return 'unknown';
    }
  }

  /** Whether a schema is an enum of strings, itself or through its $ref. */
  private isStringEnum(json: Json, io: Io): boolean {
    const target = json.$ref ? this.defs.get(`${io}:${json.$ref.replace(/^#\/\$defs\//, '')}`) : json;
    return Boolean(target?.enum?.every((value) => typeof value === 'string'));
  }

  private printObject(json: Json, io: Io, indent: string): string {
    const inner = `${indent}  `;
    const required = new Set(json.required ?? []);
    const lines: string[] = [];
    for (const [key, property] of Object.entries(json.properties ?? {})) {
      const defaultNote =
        property.default !== undefined ? `@default ${JSON.stringify(property.default)}` : undefined;
      lines.push(docComment([property.description, defaultNote], inner).trimEnd());
      const name = isIdentifier(key) ? key : JSON.stringify(key);
      const type = this.print(property, io, inner);
      // exactOptionalPropertyTypes: zod infers `key?: T | undefined`, and callers may pass undefined.
      lines.push(required.has(key) ? `${inner}${name}: ${type};` : `${inner}${name}?: ${type} | undefined;`);
    }
    const extra = json.additionalProperties;
    if (extra !== undefined && extra !== false) {
      const type = extra === true ? 'unknown' : this.print(extra, io, inner);
      lines.push(`${inner}[key: string]: ${type};`);
    }
    const body = lines.filter(Boolean).join('\n');
    return body ? `{\n${body}\n${indent}}` : '{}';
  }
}

/** A bare `{ type: 'string' }`: no format, pattern or enum that would narrow it. */
const isPlainString = (json: Json): boolean =>
  json.type === 'string' && Object.keys(json).every((key) => key === 'type' || key === 'description');

/** The input of an operation without its path parameters: the query of a GET, else the body. */
function paramsJson(contract: OperationContract, io: Io): { json: Json; id?: string } {
  const full = z.toJSONSchema(contract.input, {
    io,
    unrepresentable: 'any',
    target: 'draft-2020-12',
  }) as Json;
  const top = full.$ref ? full.$defs![full.$ref.replace(/^#\/\$defs\//, '')]! : full;
  const path = new Set(pathParams(contract.path));
  if (path.size === 0 && full.$ref) return { json: top, id: full.$ref.replace(/^#\/\$defs\//, '') };
  const properties = Object.fromEntries(
    Object.entries(top.properties ?? {}).filter(([key]) => !path.has(key)),
  );
  const required = (top.required ?? []).filter((key) => !path.has(key));
  return { json: { ...top, properties, required } };
}

export function renderGenerated(): string {
  const printer = new Printer();
  const operationTypes: string[] = [];
  const routes: string[] = [];

  for (const id of WRAPPED_INPUTS)
    if (!(id in operations)) throw new Error(`WRAPPED_INPUTS names ${id}, which is no operation`);
  for (const [operationId, contract] of Object.entries(operations) as [string, OperationContract][]) {
    const path = pathParams(contract.path);
    const { json, id } = paramsJson(contract, 'input');
    let params: string;
    if (Object.keys(json.properties ?? {}).length === 0) params = 'undefined';
    else if (id) params = printer.typeOf(contract.input, 'input');
    else if (WRAPPED_INPUTS.has(operationId)) params = printer.inline(json, 'input', '  ');
    else params = printer.declareAnonymous(`${pascal(operationId)}Params`, json, 'input');

    let output: string;
    if (contract.successStatus === 204) output = 'void';
    else if (contract.response !== 'json') output = 'string';
    else {
      output = printer.typeOf(contract.output, 'output');
      if (!/^\w+$/.test(output) || output === 'string')
        output = printer.declareAnonymous(
          `${pascal(operationId)}Result`,
          z.toJSONSchema(contract.output, { io: 'output', unrepresentable: 'any' }) as Json,
          'output',
        );
    }
    const pathType = path.length ? `{ ${path.map((name) => `${name}: string`).join('; ')} }` : 'undefined';
    const statuses = [contract.successStatus, contract.pendingStatus].filter(Boolean).join(' or ');
    const doc = docComment(
      [
        `${contract.summary}.`,
        `\`${contract.method} ${contract.path}\`: ${statuses}; errors ${contract.errorStatuses.join(', ') || 'none'}.`,
      ],
      '  ',
    );
    const ignore =
      output === 'void'
        ? '  // biome-ignore lint/suspicious/noConfusingVoidType: a 204 answers nothing, as the contract infers it\n'
        : '';
    operationTypes.push(
      `${doc}${ignore}  ${operationId}: { path: ${pathType}; params: ${params}; output: ${output} };`,
    );
    // The server replays a write only when it comes with a credential (decisions.md, "Rate limits
    // and idempotency"): anonymous writes run again, whatever the contract's `replayable` says.
    const idempotent = contract.method === 'GET' || (contract.replayable && contract.security.length > 0);
    // route()'s arguments, its defaults left out: a GET or a replayed write, answering JSON.
    const route: string[] = [`'${contract.method}'`, `'${contract.path}'`];
    if (!idempotent || contract.response !== 'json') route.push(String(idempotent));
    if (contract.response !== 'json') route.push(`'${contract.response}'`);
    routes.push(`  ${operationId}: /* @__PURE__ */ route(${route.join(', ')}),`);
  }

  const events: string[] = [];
  for (const [name, schema] of Object.entries(streamEventSchemas)) {
    let type = printer.typeOf(schema, 'output');
    if (!/^\w+$/.test(type))
      type = printer.declareAnonymous(
        `${name.split('-').map(pascal).join('')}Event`,
        z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as Json,
        'output',
      );
    events.push(`  '${name}': ${type};`);
  }
  printer.typeOf(ZError, 'output');
  // The error body's code is the service's; the SDK's errors carry its own codes too (a
  // LinkDeniedError's `link_denied`): its KnownErrorCode is the contract's list of both, in the
  // place of the API's, so that code branching on one completes and type-checks.
  if (!printer.declarations.has('KnownErrorCode')) throw new Error('ZError no longer names KnownErrorCode');
  printer.declareAnonymous('KnownErrorCode', z.toJSONSchema(ZClientKnownErrorCode) as Json, 'output');
  // The body of a webhook delivery, which verifyWebhook returns.
  printer.typeOf(ZWebhookPayload, 'output');

  return `// Generated by \`pnpm --filter @convene/sdk generate\` (scripts/generate.ts) from @convene/contract.
// Do not edit: change the contract and generate again.

${[...printer.declarations.values()].join('\n')}
/**
 * Every REST operation by operationId: its path parameters, its params (the query of a GET, else
 * the JSON body) and the answer of a success.
 */
export interface OperationTypes {
${operationTypes.join('\n')}
}

export type OperationId = keyof OperationTypes;

export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  /**
   * Whether sending it twice does no more than sending it once: a GET, or a write the server
   * replays from its Idempotency-Key (a join too, to the address and user token it came from).
   * The others (createSpace, startLink and the anonymous pollLink, signup, login, ask) are never
   * retried after an ambiguous failure: the server would run them again.
   */
  idempotent: boolean;
  response: 'json' | 'event-stream' | 'markdown' | 'diff';
}

/**
 * A route of the table below: idempotent and answering JSON unless said otherwise. A call, not an
 * object written out for each, which would repeat every field's name 47 times in a bundle; each
 * call is annotated as pure, so that a bundler drops the table when nothing uses it.
 */
const route = <
  M extends Route['method'],
  P extends string,
  I extends boolean = true,
  R extends Route['response'] = 'json',
>(
  method: M,
  path: P,
  idempotent = true as I,
  response = 'json' as R,
): { readonly method: M; readonly path: P; readonly idempotent: I; readonly response: R } => ({
  method,
  path,
  idempotent,
  response,
});

/** What the client needs at run time to call each operation. */
export const routes = {
${routes.join('\n')}
} as const;

// Checked apart: a \`satisfies\` on the table would have route() infer the fields it leaves out
// (\`idempotent\`, \`response\`) from Route, as \`boolean\` and the union, rather than their literals.
routes satisfies Record<OperationId, Route>;

/** The data of each event of a space's stream, by its SSE event name. */
export interface StreamEventData {
${events.join('\n')}
}

export type StreamEventName = keyof StreamEventData;

/**
 * One event of a space's stream: its name, its data and, for every event but \`context\`, its id
 * (the space's event sequence number). \`switch (event.event)\` narrows \`event.data\`.
 */
export type StreamEvent = {
  [K in StreamEventName]: { event: K; id: K extends 'context' ? undefined : number; data: StreamEventData[K] };
}[StreamEventName];

/**
 * A webhook delivery as verifyWebhook returns it: \`switch (event.type)\` narrows \`event.data\`
 * (a MessageView for \`message\` and \`mention\`, else the data of the stream event of that name).
 */
export type WebhookEvent = {
  [K in WebhookPayload['type']]: Omit<WebhookPayload, 'type' | 'data'> & {
    type: K;
    data: K extends 'mention' ? MessageView : K extends StreamEventName ? StreamEventData[K] : never;
  };
}[WebhookPayload['type']];

/** The service's limits, as it enforces them: beyond them a request is refused with 400 or 409. */
export const limits = ${JSON.stringify(limits, null, 2)} as const;
`;
}

/** Formats generated source as the repository's Biome configuration would. */
export function format(source: string): string {
  const biome = join(packageRoot, '../../node_modules/.bin/biome');
  const result = spawnSync(biome, ['format', `--stdin-file-path=${generatedPath}`], {
    input: source,
    encoding: 'utf8',
    cwd: packageRoot,
  });
  if (result.status !== 0) throw new Error(`biome format failed:\n${result.stderr}`);
  return result.stdout;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(generatedPath, format(renderGenerated()));
  console.log(`wrote ${generatedPath}`);
}
