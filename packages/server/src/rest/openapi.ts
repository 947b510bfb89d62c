import { type OperationContract, POLL_TOKEN_DESCRIPTION, pathParams, ZErrorCode } from '@convene/contract';
import type { OpenAPIObject } from 'trpc-to-openapi';
import { generateOpenApiDocument } from 'trpc-to-openapi';
import { z } from 'zod';
import { stripClosedObjects } from '../mcp/tool';
import type { Declaration, OperationDeclaration } from '../operations/declare';
import type { routerOf } from './procedures';

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Validation failure, or unsupported API-Version',
  401: 'Key or token missing, unknown, or of the wrong type; carries WWW-Authenticate',
  403: 'Valid key, forbidden action',
  404: 'Not found',
  409: 'State conflict',
  410: 'Link request expired or already consumed',
  422: 'Idempotency-Key reused with a different body',
  423: 'Artifact lock held by someone else',
  429: 'Rate limit exceeded; carries Retry-After',
  503: 'The database cannot be reached, the request was not answered within 30 s, or the server is shutting down (`shutting_down`: the request was not run); carries Retry-After',
};

/**
 * The OpenAPI 3.1 document of the declared operations: trpc-to-openapi documents the procedures
 * from their contract schemas, the raw routes add theirs (derived from the contract where they
 * serve a contract operation), and both get the contract's statuses and credentials.
 */
export function buildOpenApiDocument(
  publicUrl: string,
  declarations: readonly Declaration[],
  router: ReturnType<typeof routerOf>,
): OpenAPIObject {
  const doc = generateOpenApiDocument(router, {
    title: 'Convene',
    description:
      'A neutral meeting place where software agents and humans meet in shared spaces, talk, and co-edit markdown documents under exclusive locks.',
    version: '1.0.0',
    baseUrl: publicUrl,
    securitySchemes: {
      spaceKey: { type: 'apiKey', in: 'header', name: 'X-Private-Key' },
      userToken: { type: 'apiKey', in: 'header', name: 'X-User-Token' },
      dashboardJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
    },
    paths: rawPaths(declarations) as never,
  });
  documentProcedures(doc, declarations);
  const contracts = contractsOf(declarations);
  documentPolicies(
    doc,
    replayOfWrites(contracts),
    new Set(contracts.filter((c) => c.linksHuman).map((c) => c.operationId)),
    new Set(contracts.filter((c) => c.rateLimited === false).map((c) => c.operationId)),
  );
  withoutUnusedErrorSchemas(doc);
  openResponseSchemas(doc);
  return doc;
}

const SCHEMA_REF = '#/components/schemas/';

/** The names of the component schemas `roots` refer to, directly or through other components. */
function componentsUsedBy(doc: OpenAPIObject, roots: unknown[]): Set<string> {
  const names = new Set<string>();
  const pending = [...roots];
  while (pending.length > 0) {
    const node = pending.pop();
    if (Array.isArray(node)) pending.push(...node);
    else if (node && typeof node === 'object') {
      const ref = (node as { $ref?: unknown }).$ref;
      if (typeof ref === 'string' && ref.startsWith(SCHEMA_REF)) {
        const name = ref.slice(SCHEMA_REF.length);
        if (!names.has(name)) {
          names.add(name);
          pending.push(doc.components?.schemas?.[name]);
        }
      } else pending.push(...Object.values(node));
    }
  }
  return names;
}

/**
 * Answers are open objects: clients ignore unknown response fields and additive changes never
 * bump the version (spec, Versioning 4), so a client that validates answers against the document
 * must not refuse the next field a later server adds. zod closes every output object
 * (`additionalProperties: false`): the schemas written inline in answers, and the components only
 * answers use, drop it, as the MCP tools' output schemas do. Request bodies are left as zod writes
 * them: open too, since the server ignores (strips) the fields it does not know, but for a slip of
 * a field it takes, which it refuses (http/misnamed-fields.ts).
 */
function openResponseSchemas(doc: OpenAPIObject): void {
  const requests: unknown[] = [];
  const responses: unknown[] = [];
  for (const item of Object.values(doc.paths ?? {}))
    for (const op of Object.values(item as Record<string, unknown>)) {
      if (!op || typeof op !== 'object' || !('responses' in op)) continue;
      const {
        parameters,
        requestBody,
        responses: answers,
      } = op as {
        parameters?: unknown;
        requestBody?: unknown;
        responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
      };
      requests.push(parameters, requestBody);
      for (const answer of Object.values(answers ?? {}))
        for (const media of Object.values(answer?.content ?? {})) {
          stripClosedObjects(media.schema);
          responses.push(media.schema);
        }
    }
  requests.push(doc.components?.parameters);
  const requested = componentsUsedBy(doc, requests);
  for (const name of componentsUsedBy(doc, responses))
    if (!requested.has(name)) stripClosedObjects(doc.components?.schemas?.[name]);
}

/**
 * The generator adds tRPC's own error bodies (`error.BAD_REQUEST`…: `{message, code, issues}`),
 * which no operation answers (every error is `Error`, `{error, …}`): a client generated from the
 * document would model errors the service never sends. Those no operation refers to go.
 */
function withoutUnusedErrorSchemas(doc: OpenAPIObject): void {
  const schemas = doc.components?.schemas;
  if (!schemas) return;
  const used = componentsUsedBy(doc, [doc.paths, doc.components?.parameters, doc.components?.headers]);
  for (const name of Object.keys(schemas))
    if (name.startsWith('error.') && !used.has(name)) delete schemas[name];
}

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

/** Error responses of the contract's statuses; `described` may say more of one than the table. */
function errorResponses(
  statuses: readonly number[],
  described: Record<string, { description?: string }> = {},
): Record<string, unknown> {
  return Object.fromEntries(
    statuses.map((status) => [
      String(status),
      errorResponse(described[String(status)]?.description ?? ERROR_DESCRIPTIONS[status] ?? 'Error'),
    ]),
  );
}

const securityOf = (contract: OperationContract) => contract.security.map((scheme) => ({ [scheme]: [] }));

/** The raw routes' path items: contract operations derived from the contract, the rest as declared. */
function rawPaths(declarations: readonly Declaration[]): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const declaration of declarations) {
    if (declaration.kind !== 'route') continue;
    for (const [method, { contract, openapi }] of Object.entries(declaration.methods)) {
      const operation = contract ? rawOperation(contract, openapi ?? {}) : openapi;
      if (!operation) continue;
      paths[declaration.path] = { ...paths[declaration.path], [method.toLowerCase()]: operation };
    }
  }
  return paths;
}

/**
 * A contract operation served by a raw route: id, tag, summary, credentials, path and query
 * parameters or JSON body, and error statuses from the contract; the success answer (not JSON,
 * or not only) and anything else from the declaration.
 */
function rawOperation(contract: OperationContract, extra: Record<string, unknown>): Record<string, unknown> {
  const { responses = {}, ...rest } = extra as { responses?: Record<string, { description?: string }> };
  const input = contract.input as z.ZodObject;
  const inPath = Object.fromEntries(pathParams(contract.path).map((name) => [name, true as const]));
  const path = Object.keys(inPath).length ? input.pick(inPath as never) : undefined;
  const others = Object.keys(inPath).length ? input.omit(inPath as never) : input;
  const success = String(contract.successStatus);
  return {
    operationId: contract.operationId,
    tags: [contract.tag],
    summary: contract.summary,
    security: securityOf(contract),
    requestParams: { ...(path ? { path } : {}), ...(contract.method === 'GET' ? { query: others } : {}) },
    ...(contract.method === 'GET'
      ? {}
      : { requestBody: { required: true, content: { 'application/json': { schema: others } } } }),
    ...rest,
    responses: {
      [success]: responses[success] ?? {
        description: 'Successful response',
        content: { 'application/json': { schema: contract.output } },
      },
      ...errorResponses(contract.errorStatuses, responses),
    },
  };
}

/**
 * The components `ErrorCode` (open: a known code or any string) and `KnownErrorCode` (the enum
 * of today's codes, each described), as the contract writes them.
 */
function errorCodeSchemas(): Record<string, unknown> {
  const { $defs = {} } = z.toJSONSchema(ZErrorCode, { target: 'draft-2020-12' });
  return asComponents($defs);
}

type ComponentSchemas = NonNullable<NonNullable<OpenAPIObject['components']>['schemas']>;

/** The `$defs` z.toJSONSchema wrote, as components of the document (their `$ref`s rewritten). */
const asComponents = ($defs: Record<string, unknown>): ComponentSchemas =>
  JSON.parse(JSON.stringify($defs).replaceAll('"#/$defs/', `"${SCHEMA_REF}`));

/** Statuses, error bodies and credentials of the procedures, from their contract (the generator knows only 200). */
function documentProcedures(doc: OpenAPIObject, declarations: readonly Declaration[]): void {
  doc.components ??= {};
  doc.components.schemas ??= {};
  Object.assign(doc.components.schemas, errorCodeSchemas());
  doc.components.schemas.Error = {
    type: 'object',
    required: ['error', 'code'],
    properties: {
      error: { type: 'string', description: 'What went wrong, for a human: its text may change' },
      code: { $ref: `${SCHEMA_REF}ErrorCode` },
      lockedBy: { type: 'string', format: 'uuid', description: 'On 423: participantId of the lock holder' },
      lockExpiresAt: {
        type: 'string',
        format: 'date-time',
        description: 'On 423 when someone holds the lock: its expiry',
      },
      version: {
        type: 'integer',
        minimum: 1,
        description: 'On 409 from writeArtifact with a stale baseVersion: the current version',
      },
      retryAfter: { type: 'integer', minimum: 0, description: 'On 429: seconds until the window resets' },
    },
    additionalProperties: true,
  };
  for (const declaration of declarations) {
    if (declaration.kind === 'operation') documentProcedure(doc, declaration);
  }
}

function documentProcedure(doc: OpenAPIObject, { contract, pending }: OperationDeclaration): void {
  const operation = (
    doc.paths?.[contract.path] as
      | Record<
          string,
          {
            responses?: Record<string, unknown>;
            security?: unknown;
            requestBody?: {
              required?: boolean;
              content?: Record<string, { schema?: { required?: string[] } }>;
            };
          }
        >
      | undefined
  )?.[contract.method.toLowerCase()];
  if (!operation) return;
  operation.security = securityOf(contract);
  const responses: Record<string, unknown> = {};
  const ok = operation.responses?.['200'];
  if (contract.successStatus === 204) responses['204'] = { description: 'No content' };
  else if (ok) responses[String(contract.successStatus)] = ok;
  if (contract.pendingStatus && pending && ok && typeof ok === 'object') {
    responses[String(contract.pendingStatus)] = {
      ...ok,
      description: pending.description,
      ...(pending.headers ? { headers: pending.headers } : {}),
    };
    // Each success its own body, where the contract gives them (else the common shape serves both).
    if (contract.answers) {
      withBody(responses, contract.successStatus, componentRef(doc, contract.answers.success));
      withBody(responses, contract.pendingStatus, componentRef(doc, contract.answers.pending));
    }
  }
  Object.assign(responses, errorResponses(contract.errorStatuses));
  operation.responses = responses;
  // A body whose every field is optional may be left out (createApiToken, startLink…).
  const body = operation.requestBody;
  if (body && !(body.content?.['application/json']?.schema?.required?.length ?? 0)) body.required = false;
}

/** A `$ref` to a named schema of the contract (its meta id), added to the components when missing. */
function componentRef(doc: OpenAPIObject, schema: z.ZodType): { $ref: string } {
  const { $ref, $defs = {} } = z.toJSONSchema(schema, { io: 'output', target: 'draft-2020-12' }) as {
    $ref?: string;
    $defs?: Record<string, unknown>;
  };
  if (!$ref?.startsWith('#/$defs/')) throw new Error('a schema of the document needs a meta id');
  doc.components ??= {};
  doc.components.schemas = { ...asComponents($defs), ...doc.components.schemas };
  return { $ref: `${SCHEMA_REF}${$ref.slice('#/$defs/'.length)}` };
}

/** The answer of `status` with its JSON body's schema replaced by `schema`. */
function withBody(responses: Record<string, unknown>, status: number, schema: unknown): void {
  const answer = responses[String(status)] as { content?: Record<string, unknown> };
  responses[String(status)] = { ...answer, content: { ...answer.content, 'application/json': { schema } } };
}

const WRITE_METHODS = new Set(['post', 'put', 'patch', 'delete']);

/** The contract operations of the declarations: procedures', and those raw routes serve. */
function contractsOf(declarations: readonly Declaration[]): OperationContract[] {
  return declarations.flatMap((declaration) =>
    declaration.kind === 'operation'
      ? [declaration.contract]
      : declaration.kind === 'route'
        ? Object.values(declaration.methods).flatMap((method) => (method?.contract ? [method.contract] : []))
        : [],
  );
}

/** The optional X-User-Token of the operations that link what they make to a human. */
const USER_TOKEN_DESCRIPTION =
  'Optional: a `usr_` API token of the human this links to. The space (createSpace) or the participant (joinSpace) then appears in their dashboard (`GET /hub/me/spaces`) and its key can be recovered with `GET /hub/space/{spaceId}/key`. Identity only: it grants no permission in the space, and an invalid token is ignored.';

/** What the document says of a write whose Idempotency-Key is never replayed. */
const NEVER_REPLAYED = 'Never replayed: it takes no `Idempotency-Key`, and a retry acts again.';

/**
 * Whether each write of the contract is replayed from its Idempotency-Key, by operationId: writes
 * made with a credential are, except those the contract marks never replayed (createSpace,
 * startLink); anonymous ones never are. Only the replayed can answer 422 for an
 * Idempotency-Key that comes back with another body. Raw routes outside the contract (/mcp, /a2a)
 * are not in it: the document promises nothing of them.
 */
function replayOfWrites(contracts: readonly OperationContract[]): Map<string, boolean> {
  return new Map(
    contracts
      .filter((c) => c.method !== 'GET')
      .map((c) => [c.operationId, c.replayable && c.security.length > 0] as const),
  );
}

/**
 * Statuses the specification's general rules give every operation beyond its Endpoints table:
 * 400 for an unsupported API-Version (or an Idempotency-Key over 255 characters on a write), 429
 * (the rate limit covers every endpoint but the health probe: `rateLimited: false`) and 503 (decisions.md, "Abuse and faults").
 */
const POLICY_STATUSES = [400, 429, 503];

/**
 * Headers of some statuses (src/http/errors.ts): WWW-Authenticate on 401, Retry-After on 429 and
 * 503; and Idempotency-Replayed on what a replayed write may replay (src/http/idempotency.ts): its
 * successes and its refusals, but neither a 422 (another body), a 429 (never stored) nor a 5xx.
 */
function headersOfStatus(status: number, replayed: boolean): string[] {
  const headers: string[] = [];
  if (status === 401) headers.push('WWW-Authenticate');
  if (status === 429 || status === 503) headers.push('Retry-After');
  if (replayed && status < 500 && status !== 422 && status !== 429) headers.push('Idempotency-Replayed');
  return headers;
}

/**
 * The policies every operation shares (src/http): the API-Version request header, the
 * Idempotency-Key of writes, the API-Version, RateLimit-* and Request-Id headers of every answer,
 * and those of some statuses (headersOfStatus).
 */
function documentPolicies(
  doc: OpenAPIObject,
  replayOf: ReadonlyMap<string, boolean>,
  linksHuman: ReadonlySet<string>,
  unlimited: ReadonlySet<string>,
): void {
  doc.components ??= {};
  const components = doc.components;
  components.parameters = {
    ...components.parameters,
    ApiVersion: {
      name: 'API-Version',
      in: 'header',
      required: false,
      description: 'Requested major version; only `1` is served. Another value answers 400.',
      schema: { type: 'string', enum: ['1'] },
    },
    IdempotencyKey: {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'A fresh unique key (a UUID) per logical write; a retry within 24 hours replays the first answer with `Idempotency-Replayed: true`.',
      schema: { type: 'string', maxLength: 255 },
    },
    PollToken: {
      name: 'X-Poll-Token',
      in: 'header',
      required: false,
      description: POLL_TOKEN_DESCRIPTION,
      schema: { type: 'string' },
    },
    UserToken: {
      name: 'X-User-Token',
      in: 'header',
      required: false,
      description: USER_TOKEN_DESCRIPTION,
      schema: { type: 'string' },
    },
  };
  const count = { schema: { type: 'integer' as const, minimum: 0 } };
  // Headers of every answer: src/http/versioning.ts, rate-limit.ts and request-id.ts set them.
  const everyAnswer = {
    'API-Version': { description: 'Major version served', schema: { type: 'string' as const } },
    'RateLimit-Limit': { description: 'Requests allowed per window', ...count },
    'RateLimit-Remaining': { description: 'Requests left in this window', ...count },
    'RateLimit-Reset': { description: 'Seconds until the window resets', ...count },
    'RateLimit-Policy': { description: 'The policy, e.g. `300;w=60`', schema: { type: 'string' as const } },
    'Request-Id': {
      description:
        "The id of this request in the server's logs (a UUID, or the `Request-Id` or `X-Request-Id` the client sent when it is 1 to 128 of `A-Z a-z 0-9 . _ : -`); quote it when reporting a problem",
      schema: { type: 'string' as const },
    },
  };
  components.headers = {
    ...components.headers,
    ...everyAnswer,
    'WWW-Authenticate': {
      description:
        'On every 401: where to learn how to authenticate (RFC 9728), `Bearer resource_metadata="<service>/.well-known/oauth-protected-resource"`',
      required: true,
      schema: { type: 'string' },
    },
    'Retry-After': {
      description:
        'Seconds to wait before retrying: on every 429, and on a 503 when the database cannot be reached, the request took over 30 s or the server is shutting down',
      ...count,
    },
    'Idempotency-Replayed': {
      description:
        '`true` when this answer is the stored first answer to the same Idempotency-Key (method, path and credential), replayed without acting again',
      schema: { type: 'string', enum: ['true'] },
    },
  };
  const refs = (names: readonly string[]) =>
    Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
  const responseHeaders = refs(Object.keys(everyAnswer));
  for (const item of Object.values(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item as Record<string, unknown>)) {
      if (!op || typeof op !== 'object' || !('responses' in op)) continue;
      const operation = op as {
        operationId?: string;
        parameters?: unknown[];
        responses: Record<string, { headers?: object }>;
      };
      const replay = WRITE_METHODS.has(method) ? replayOf.get(operation.operationId ?? '') : undefined;
      const isReplayed = replay === true;
      // Only a write that is replayed offers Idempotency-Key: a generated client would send it and
      // retry, believing the retry safe. The contract's other writes say so (a retry of createSpace
      // makes a second space).
      const parameters = [{ $ref: '#/components/parameters/ApiVersion' }];
      if (isReplayed) parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });
      if (operation.operationId === 'getJoinStatus')
        parameters.push({ $ref: '#/components/parameters/PollToken' });
      if (linksHuman.has(operation.operationId ?? ''))
        parameters.push({ $ref: '#/components/parameters/UserToken' });
      operation.parameters = [...(operation.parameters ?? []), ...parameters];
      if (isReplayed) (operation as Record<string, unknown>)['x-idempotent-replay'] = true;
      else if (replay === false) {
        const described = operation as { description?: string };
        described.description = [described.description, NEVER_REPLAYED].filter(Boolean).join('\n\n');
      }
      const policy = isReplayed ? [...POLICY_STATUSES, 422] : POLICY_STATUSES;
      const missing = policy.filter(
        (status) =>
          !(String(status) in operation.responses) &&
          !(status === 429 && unlimited.has(operation.operationId ?? '')),
      );
      Object.assign(operation.responses, errorResponses(missing));
      for (const [status, response] of Object.entries(operation.responses)) {
        if (response && typeof response === 'object' && !('$ref' in response)) {
          response.headers = {
            ...responseHeaders,
            ...refs(headersOfStatus(Number(status), isReplayed)),
            ...response.headers,
          };
        }
      }
    }
  }
}
