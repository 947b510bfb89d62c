import type { StoredResponse } from '@convene/core';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Caller } from '../caller';
import type { Begun } from '../http/idempotency';

/**
 * What a tool handler receives besides its arguments: the caller (its space key is the
 * `privateKey` argument, else the connection's X-Private-Key header; its user token the
 * `userToken` argument where a tool takes one, else X-User-Token), and what a long wait needs.
 */
export interface ToolContext extends Caller {
  /** Aborted when the client cancels the call, the connection drops, or the server shuts down. */
  signal: AbortSignal;
  /**
   * Sends a progress notification for this call, when its client asked for them (a
   * progressToken): a long wait tells the client it is alive.
   */
  progress?: ((progress: number, total: number | undefined, message: string) => void) | undefined;
  /**
   * Starts the guarded write of a call made with an idempotency key (its `idempotencyKey`
   * argument, else the Idempotency-Key header of a POST that holds this call alone): the answer to
   * replay, or the guard to run the write under; undefined when the call has no key or no
   * credential to keep the record for. Its `args` are the call's, credentials left out.
   */
  guard?:
    | ((idempotencyKey: string | undefined, args: Record<string, unknown>) => Promise<Begun | undefined>)
    | undefined;
}

/** What a tool returns for a write its idempotency key already recorded: the answer given then. */
export class Replayed {
  constructor(readonly response: StoredResponse) {}
}

/** The optional argument of the tools whose writes are replayed, as REST's Idempotency-Key header. */
export const idempotencyKeyArg = {
  idempotencyKey: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe(
      'A fresh UUID for this write: the same call again with it returns the first answer instead of writing twice (instructions, Retries).',
    ),
};

/**
 * One row of the MCP tool table (derived from the declarations, src/operations): the operation's
 * zod contract for input and output, the hints a host shows its user, and a handler that calls
 * one core use case (never HTTP).
 */
export interface Tool<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  /**
   * Throws the 401 of a call that presents none of the credentials the operation takes, before
   * its arguments are read: REST says that first too (decisions.md: the same status and message).
   */
  requireCredential?(credentials: { key: string | undefined; userToken: string | undefined }): void;
  run(input: z.output<I>, ctx: ToolContext): Promise<z.input<O> | Replayed>;
}

export const defineTool = <I extends z.ZodType, O extends z.ZodType>(tool: Tool<I, O>): Tool => tool as never;

/** `lockArtifact` → `lock_artifact`: the MCP tool named after an operation. */
export const toolName = (operationId: string): string =>
  operationId.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

/**
 * What writes every operationId of a tool in `names` as that tool's name (`createSpace's spaceId`
 * → `create_space's spaceId`): the contract's descriptions, shared with the OpenAPI document, name
 * operations, and an agent given the tool list alone would call what it reads.
 */
export function toolNamer(names: readonly string[]): (text: string) => string {
  const byOperation = new Map(
    names.filter((name) => name.includes('_')).map((name) => [camelCase(name), name] as const),
  );
  return (text) => text.replace(/\b[a-z]+(?:[A-Z][a-z]*)+\b/g, (word) => byOperation.get(word) ?? word);
}

const camelCase = (name: string) => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** Every `description` under `node` (in place) rewritten by `rename` (a toolNamer). */
export function renameDescriptions(node: unknown, rename: (text: string) => string): void {
  eachObject(node, (record) => {
    if (typeof record.description === 'string') record.description = rename(record.description);
  });
}

/**
 * The space key an MCP call carries as its `privateKey` argument or param, without the spaces or
 * line break around it that a key copied by hand or by a model often has (a key holds none);
 * undefined when there is none.
 */
export function keyArgument(value: unknown): string | undefined {
  const key = typeof value === 'string' ? value.trim() : '';
  return key === '' ? undefined : key;
}

/** The key argument every keyed tool takes (the connection header is the alternative). */
export const keyArg = {
  privateKey: z
    .string()
    .optional()
    .describe(
      'The space key: owner, participant or invitation key, as the tool requires. Omit it when the MCP connection sends the X-Private-Key header.',
    ),
};

/** A tool that changes something on this service: whether it may destroy, whether a repeat is safe. */
const change = (destructiveHint: boolean, idempotentHint: boolean) =>
  ({ readOnlyHint: false, destructiveHint, idempotentHint, openWorldHint: false }) as const;

/**
 * MCP tool annotations by how an operation behaves, read as a host reads them: `readOnlyHint`
 * says a call changes nothing, so a host may retry it or answer it from a cache; `idempotentHint`
 * says a repeat with the same arguments is safe and answers alike, so a change whose repeat
 * answers 409, 401 or 404 is not idempotent; `destructiveHint` says something may be lost for
 * good. Every tool is classified here, by one of these kinds, never by hand (test: mcp.test 'gives
 * every tool the hints of what it does'). All tools act on this service only, but a webhook.
 */
export const hints = {
  /** Changes nothing. */
  read: { readOnlyHint: true, openWorldHint: false },
  /** Adds something new at each call (a space, an invitation, a join, a message, an artifact). */
  create: change(false, false),
  /**
   * Hands out a secret for a while: the first call that returns it starts the time after which a
   * repeat no longer gets it (get_join_status, the participant key of an approved join).
   */
  collect: change(false, false),
  /**
   * Moves a participant to a state it was not in; a repeat answers 409 (approve, mute, unmute).
   */
  transition: change(false, false),
  /** Sets a state; a repeat answers alike (lock, heartbeat, unlock, ack_inbox). */
  setState: change(false, true),
  /** Replaces the fields given; a repeat answers alike (update_space). */
  overwrite: change(true, true),
  /** Replaces content with a new version at each call (write, restore). */
  rewrite: change(true, false),
  /**
   * Ends something for good; a repeat answers 409, 401 or 404 (close the space, kick, leave,
   * delete a webhook).
   */
  destroy: change(true, false),
} satisfies Record<string, ToolAnnotations>;

type JsonSchema = Record<string, unknown>;

/**
 * The JSON Schema a tool publishes, from the same zod schema REST validates with. MCP wants an
 * object schema at the root, so a root `$ref` to a named definition is inlined; output schemas
 * drop `additionalProperties: false`, since clients must ignore fields added later.
 */
export function toolJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const json = z.toJSONSchema(schema, { target: 'draft-7', io, unrepresentable: 'any' }) as JsonSchema;
  let root = json;
  const ref = typeof json.$ref === 'string' ? json.$ref.match(/^#\/definitions\/(.+)$/)?.[1] : undefined;
  const definitions = json.definitions as Record<string, JsonSchema> | undefined;
  if (ref && definitions?.[ref]) {
    const { $ref: _ref, definitions: _definitions, ...rest } = json;
    // The definition inlined stays only where something else refers to it (a recursive schema):
    // else it is the root once more, which doubled a listing's output schemas.
    const { [ref]: inlined, ...others } = definitions;
    const referred = JSON.stringify([inlined, others]).includes(`"#/definitions/${ref}"`);
    const kept = referred ? definitions : others;
    root = { ...rest, ...inlined, ...(Object.keys(kept).length > 0 ? { definitions: kept } : {}) };
  }
  if (io === 'output') stripClosedObjects(root);
  else withoutDateTimePatterns(root);
  return root;
}

/**
 * Drops the pattern of every `format: date-time` string under `node` (in place): zod spells the
 * format out again as a regular expression of 288 characters, which a model reads with every
 * listing; the format says it, and the server checks it.
 */
function withoutDateTimePatterns(node: unknown): void {
  eachObject(node, (record) => {
    if (record.format === 'date-time') delete record.pattern;
  });
}

/** Drops every `additionalProperties: false` under `node` (in place): the objects it closed accept additions. */
export function stripClosedObjects(node: unknown): void {
  eachObject(node, (record) => {
    if (record.additionalProperties === false) delete record.additionalProperties;
  });
}

/** Calls `visit` with every object under `node` (in arrays too), parents before their children. */
function eachObject(node: unknown, visit: (record: Record<string, unknown>) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) eachObject(item, visit);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const record = node as Record<string, unknown>;
  visit(record);
  for (const value of Object.values(record)) eachObject(value, visit);
}
