import type { Credential, HttpMethod, OperationContract } from '@convene/contract';
import {
  HUMAN_CREDENTIAL_REQUIRED,
  KeyRequiredError,
  SESSION_REQUIRED,
  UnauthorizedError,
} from '@convene/core';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { RouteHandlerMethod } from 'fastify';
import type { z } from 'zod';
import type { Caller } from '../caller';
import type { Tool, ToolContext } from '../mcp/tool';
import type { RouteScope } from '../routes/scope';

/**
 * The server's side of an operation, declared once: the contract entry (operationId, method,
 * path, schemas, statuses, credentials), the core use case it calls, how the use case's result
 * becomes the answer, and the MCP tool that offers it. The tRPC procedure (and through
 * trpc-to-openapi its REST route and OpenAPI operation) and the MCP tool are derived from it.
 */
export interface OperationDeclaration {
  kind: 'operation';
  contract: OperationContract;
  /** Calls the one core use case; `input` is the contract's input, parsed. */
  run(input: unknown, caller: Caller): Promise<unknown>;
  /**
   * Slow work the use case needs that reads nothing it writes (a host lookup), done before a
   * guarded write's transaction opens and handed to `run` as `caller.prepared`: a write under an
   * Idempotency-Key runs in its record's transaction, which on the embedded database holds every
   * other query of the process. Done by `perform` when nothing did it first.
   */
  prepare?(input: unknown, caller: Caller): Promise<unknown>;
  /** The result as the answer; without it the result is the body of a plain success. */
  respond?(result: unknown): Answer;
  /** What /openapi.json says of the contract's pendingStatus answer. */
  pending?: { description: string; headers?: Record<string, unknown> };
  /**
   * Bound as its own Fastify route rather than served through the OpenAPI adapter, whose
   * per-request Fetch conversion costs the hottest write about a third of its throughput.
   */
  direct?: boolean;
  /**
   * Its use case writes the Idempotency-Key record of a guarded REST write itself, in its own
   * statement, from `caller.idempotency` (sendMessage's group commit), instead of the write running
   * in the record's transaction (see rest/direct.ts and the idempotent middleware of trpc.ts).
   */
  recordsIdempotency?: boolean;
  /**
   * Its use case counts a direct REST request against the rate limit in its own statement, from
   * `caller.rateLimit` (sendMessage's group commit), rather than the rate-limit hook in a round
   * trip of its own (see http/rate-limit.ts).
   */
  countsRateLimit?: boolean;
  /**
   * Its use case runs in no transaction of the idempotent middleware's (trpc.ts), which every
   * other write without an Idempotency-Key runs in, so that one answered 503 for taking too long
   * commits nothing. Signup and login hash a password, which no transaction should wait for:
   * signup makes its account in a transaction of its own after the hash, checking the deadline
   * before its COMMIT, and login writes nothing; pollLink keeps the deadline in a transaction of
   * its own, as its refusal of an expired approval revokes the token, which a rollback would undo.
   */
  ownTransaction?: boolean;
  tool?: ToolDeclaration;
}

/** A result as it goes out: the body, whether it is the pending answer (202), and headers. */
export interface Answer<T = unknown> {
  body: T;
  pending?: boolean;
  headers?: Record<string, string> | undefined;
}

/**
 * The MCP tool of an operation: named after the operationId in snake_case, taking the contract's
 * input (plus `privateKey` when the operation takes a space key) and calling the same use case.
 */
export interface ToolDeclaration {
  title: string;
  description: string;
  annotations: ToolAnnotations;
  /** Arguments in place of the contract's input (numbers where the path has strings)… */
  input?: z.ZodObject;
  /** …and how they become that input. */
  toInput?(args: Record<string, unknown>): Record<string, unknown>;
  /** Takes an optional usr_ token argument, so described; the connection's X-User-Token otherwise. */
  userTokenArg?: string;
  /** The tool's own answer, for an operation whose REST answer is not JSON (a file, a diff). */
  output?: z.ZodType;
  run?(input: never, ctx: ToolContext): Promise<unknown>;
}

/** How one method of a raw route is documented: as a contract operation, or as OpenAPI data. */
export interface RouteMethod {
  /** The contract operation served: its OpenAPI operation is derived from it, `openapi` added. */
  contract?: OperationContract;
  /** The OpenAPI operation as data (zod schemas allowed); absent, the method is left undocumented. */
  openapi?: Record<string, unknown>;
  tool?: ToolDeclaration;
}

/**
 * A route the OpenAPI adapter cannot serve (an event stream, a file, a page, a discovery
 * document, `/mcp`): its handler, built once from the route scope, and its documentation as data.
 */
export interface RouteDeclaration {
  kind: 'route';
  /** The path as OpenAPI writes it, with `{name}` segments. */
  path: string;
  /** The Fastify URL when it is not the path with `:name` segments. */
  url?: string;
  methods: Partial<Record<HttpMethod, RouteMethod>>;
  handler(scope: RouteScope): RouteHandlerMethod;
  /** It may wait longer than the request timeout before answering (see http/timeout.ts). */
  longWait?: boolean;
  /**
   * A static route of the human side (a page, its assets, an avatar): counted per address in the
   * pages' budget, apart from the API's rate limit (see http/rate-limit.ts).
   */
  page?: boolean;
  /**
   * The credentials it reads, which alone make a request a client of its own for the rate limit
   * (http/client.ts); `any` for /mcp, whose calls each read theirs. A contract operation's are its
   * security; a raw route outside the contract reads none unless it says so.
   */
  reads?: readonly Credential[] | 'any';
}

/** An MCP tool with no REST operation of its own (a long poll). */
export interface ToolOnlyDeclaration {
  kind: 'tool';
  tool: Tool;
}

export type Declaration = OperationDeclaration | RouteDeclaration | ToolOnlyDeclaration;

type InputOf<C> = C extends OperationContract<infer I, z.ZodType> ? z.output<I> : never;
type OutputOf<C> = C extends OperationContract<z.ZodType, infer O> ? z.input<O> : never;

interface OperationOptions<C extends OperationContract> {
  prepare?(input: InputOf<C>, caller: Caller): Promise<unknown>;
  pending?: OperationDeclaration['pending'];
  direct?: boolean;
  recordsIdempotency?: boolean;
  countsRateLimit?: boolean;
  ownTransaction?: boolean;
  tool?: TypedToolDeclaration<C>;
}

type TypedToolDeclaration<C extends OperationContract> = Omit<ToolDeclaration, 'toInput'> & {
  toInput?(args: Record<string, unknown>): InputOf<C>;
};

// The overload with `respond` comes first: TypeScript types a lambda's parameters on its first
// attempt, and `respond`'s come from `run`'s result.
/** Declares an operation whose use case's result `respond` maps to its answer (pending, headers). */
export function operation<C extends OperationContract, R>(
  contract: C,
  declaration: OperationOptions<C> & {
    run(input: InputOf<C>, caller: Caller): Promise<R>;
    respond(result: R): Answer<OutputOf<C>>;
  },
): OperationDeclaration;
/** Declares an operation whose use case's result is the body of a plain success. */
export function operation<C extends OperationContract>(
  contract: C,
  declaration: OperationOptions<C> & { run(input: InputOf<C>, caller: Caller): Promise<OutputOf<C>> },
): OperationDeclaration;
export function operation(contract: OperationContract, declaration: object): OperationDeclaration {
  return { kind: 'operation', contract, ...declaration } as OperationDeclaration;
}

/** Declares a contract operation served by a raw route (its answer is not JSON, or not only). */
export function rawOperation<
  C extends OperationContract,
  A extends z.ZodObject = C['input'] extends z.ZodObject ? C['input'] : never,
>(
  contract: C,
  declaration: {
    /** Added to the OpenAPI operation derived from the contract (the success answer's content…). */
    openapi?: Record<string, unknown>;
    /** Its tool answers JSON of its own: arguments `input` (the contract's by default), `output`. */
    tool?: Omit<ToolDeclaration, 'input' | 'toInput' | 'output' | 'run'> & {
      input?: A;
      output: z.ZodType;
      run(args: z.output<A>, ctx: ToolContext): Promise<unknown>;
    };
    /** Other methods the same handler serves at this path, outside the contract. */
    also?: Partial<Record<HttpMethod, RouteMethod>>;
    handler(scope: RouteScope): RouteHandlerMethod;
  },
): RouteDeclaration {
  const { openapi, tool, also, handler } = declaration;
  return {
    kind: 'route',
    path: contract.path,
    reads: contract.security,
    methods: {
      ...also,
      [contract.method]: {
        contract,
        ...(openapi ? { openapi } : {}),
        ...(tool ? { tool: tool as ToolDeclaration } : {}),
      },
    },
    handler,
  };
}

/** Declares a raw route outside the contract; a method maps to its OpenAPI operation, or `{}`. */
export function route(
  path: string,
  declaration: Partial<Record<HttpMethod, Record<string, unknown>>> & {
    url?: string;
    handler(scope: RouteScope): RouteHandlerMethod;
    longWait?: boolean;
    page?: boolean;
    reads?: readonly Credential[] | 'any';
  },
): RouteDeclaration {
  const { url, handler, longWait, page, reads, ...methods } = declaration;
  return {
    kind: 'route',
    path,
    ...(url ? { url } : {}),
    ...(longWait ? { longWait } : {}),
    ...(page ? { page } : {}),
    ...(reads ? { reads } : {}),
    methods: Object.fromEntries(
      Object.entries(methods).map(([method, openapi]) => [
        method,
        Object.keys(openapi as object).length ? { openapi } : {},
      ]),
    ),
    handler,
  };
}

export const toolOnly = (tool: Tool): ToolOnlyDeclaration => ({ kind: 'tool', tool });

/** Runs a declared operation: the status (the contract's), headers and body it answers. */
export async function perform(
  declaration: OperationDeclaration,
  input: unknown,
  caller: Caller,
): Promise<{ status: number; headers: Record<string, string>; body: unknown }> {
  const prepared = await prepareFor(declaration, input, caller);
  const result = await declaration.run(input, prepared);
  const answer = declaration.respond ? declaration.respond(result) : { body: result };
  const { successStatus, pendingStatus } = declaration.contract;
  return {
    status: answer.pending && pendingStatus ? pendingStatus : successStatus,
    headers: answer.headers ?? {},
    body: answer.body,
  };
}

/**
 * An operation asked with none of the credentials it takes is refused (401) before its input is
 * read: a caller with none learns that first, not what its body lacks. A body that does not even
 * parse is refused for the same reason (the app's error handler asks missingCredential). Only
 * their absence is checked here; the use case checks every credential given, dead ones included,
 * itself, with the same words for none.
 */
export function requireCredential(contract: OperationContract, caller: Credentials): void {
  const missing = missingCredential(contract, caller);
  if (missing) throw missing;
}

/** The 401 of an operation asked with none of the credentials it takes; undefined when one came. */
export function missingCredential(
  contract: OperationContract,
  caller: Credentials,
): UnauthorizedError | undefined {
  const { security } = contract;
  if (security.length === 0 || security.some((credential) => presentedBy(caller, credential)))
    return undefined;
  if (security.includes('spaceKey')) return new KeyRequiredError();
  return new UnauthorizedError(security.includes('userToken') ? HUMAN_CREDENTIAL_REQUIRED : SESSION_REQUIRED);
}

type Credentials = Pick<Caller, 'key' | 'bearer' | 'userToken'>;

const presentedBy = (caller: Credentials, credential: Credential): string | undefined =>
  credential === 'spaceKey' ? caller.key : credential === 'dashboardJwt' ? caller.bearer : caller.userToken;

/** `/hub/space/{spaceId}` as Fastify writes it: `/hub/space/:spaceId`. */
export const fastifyPath = (path: string): string => path.replace(/\{(\w+)\}/g, ':$1');

/** The caller with what the declaration's `prepare` step finds, unless it was done already. */
export async function prepareFor(
  declaration: OperationDeclaration,
  input: unknown,
  caller: Caller,
): Promise<Caller> {
  if (!declaration.prepare || caller.prepared !== undefined) return caller;
  return { ...caller, prepared: await declaration.prepare(input, caller) };
}
