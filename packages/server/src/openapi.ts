import type { OpenAPIObject } from 'trpc-to-openapi';
import { generateOpenApiDocument } from 'trpc-to-openapi';
import { appRouter } from './routers';
import { artifactFilePaths } from './routes/artifact-files';
import { discoveryPaths } from './routes/discovery';

/** Raw routes document themselves here (paths the adapter cannot generate). */
export const rawPaths: Record<string, Record<string, unknown>> = {
  ...artifactFilePaths,
  ...discoveryPaths,
};

/**
 * Operations with a second success status beside their main one, by operationId: the body
 * schema is the operation's own (its fields say which answer it is).
 */
const ALSO_SUCCEEDS: Record<
  string,
  { status: number; description: string; headers?: Record<string, unknown> }
> = {
  joinSpace: {
    status: 202,
    description: "Private space: the join waits for the owner's approval; poll statusUrl",
    headers: {
      Location: {
        description: 'Absolute URL of the join-status poll (equals statusUrl)',
        required: true,
        schema: { type: 'string', format: 'uri' },
      },
    },
  },
  getJoinStatus: { status: 202, description: "Still waiting for the owner's approval" },
};

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
};

/** The OpenAPI 3.1 document, generated from the same zod contract the procedures validate with. */
export function buildOpenApiDocument(publicUrl: string): OpenAPIObject {
  const doc = generateOpenApiDocument(appRouter, {
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
    paths: rawPaths as never,
  });
  postProcess(doc);
  documentPolicies(doc);
  return doc;
}

/** Success statuses and error bodies from per-procedure metadata (the generator knows only 200). */
function postProcess(doc: OpenAPIObject): void {
  doc.components ??= {};
  doc.components.schemas ??= {};
  doc.components.schemas.Error = {
    type: 'object',
    required: ['error'],
    properties: {
      error: { type: 'string' },
      lockedBy: { type: 'string', format: 'uuid', description: 'On 423: participantId of the lock holder' },
      lockExpiresAt: {
        type: 'string',
        format: 'date-time',
        description: 'On 423 when someone holds the lock: its expiry',
      },
      version: {
        type: 'integer',
        description: 'On 409 from writeArtifact with a stale baseVersion: the current version',
      },
      retryAfter: { type: 'integer', description: 'On 429: seconds until the window resets' },
    },
    additionalProperties: true,
  };
  for (const meta of procedureMetas(appRouter._def.procedures)) {
    if (!meta?.openapi) continue;
    const path = meta.openapi.path;
    const operation = (
      doc.paths?.[path] as
        | Record<
            string,
            {
              responses?: Record<string, unknown>;
              security?: unknown;
              operationId?: string;
              requestBody?: {
                required?: boolean;
                content?: Record<string, { schema?: { required?: string[] } }>;
              };
            }
          >
        | undefined
    )?.[meta.openapi.method.toLowerCase()];
    if (!operation) continue;
    operation.security = (meta.security ?? []).map((scheme) => ({ [scheme]: [] }));
    const responses: Record<string, unknown> = {};
    const success = meta.successStatus ?? 200;
    const ok = operation.responses?.['200'];
    if (success === 204) responses['204'] = { description: 'No content' };
    else if (ok) responses[String(success)] = ok;
    const also = operation.operationId ? ALSO_SUCCEEDS[operation.operationId] : undefined;
    if (also && ok && typeof ok === 'object') {
      responses[String(also.status)] = {
        ...ok,
        description: also.description,
        ...(also.headers ? { headers: also.headers } : {}),
      };
    }
    for (const status of meta.openapi.errorResponses ?? []) {
      responses[String(status)] = {
        description: ERROR_DESCRIPTIONS[status] ?? 'Error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    }
    operation.responses = responses;
    // A body whose every field is optional may be left out (createApiToken, startLink…).
    const body = operation.requestBody;
    if (body && !(body.content?.['application/json']?.schema?.required?.length ?? 0)) body.required = false;
  }
}

interface ProcedureMeta {
  openapi?: { method: string; path: string; errorResponses?: number[] };
  successStatus?: number;
  security?: string[];
}

/** Every procedure's meta, walking nested routers. */
export function procedureMetas(record: unknown): ProcedureMeta[] {
  const metas: ProcedureMeta[] = [];
  for (const value of Object.values(record as Record<string, unknown>)) {
    const def = (value as { _def?: { procedure?: boolean; meta?: ProcedureMeta; procedures?: unknown } })
      ._def;
    if (def?.procedure) metas.push(def.meta ?? {});
    else if (def?.procedures) metas.push(...procedureMetas(def.procedures));
    else if (value && typeof value === 'object') metas.push(...procedureMetas(value));
  }
  return metas;
}

const WRITE_METHODS = new Set(['post', 'put', 'patch', 'delete']);

/**
 * The policies every operation shares (src/http): the API-Version request header, the
 * Idempotency-Key of writes, and the API-Version and RateLimit-* headers of every answer.
 */
function documentPolicies(doc: OpenAPIObject): void {
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
  };
  const integer = { schema: { type: 'integer' as const } };
  components.headers = {
    ...components.headers,
    'API-Version': { description: 'Major version served', schema: { type: 'string' } },
    'RateLimit-Limit': { description: 'Requests allowed per window', ...integer },
    'RateLimit-Remaining': { description: 'Requests left in this window', ...integer },
    'RateLimit-Reset': { description: 'Seconds until the window resets', ...integer },
    'RateLimit-Policy': { description: 'The policy, e.g. `300;w=60`', schema: { type: 'string' } },
  };
  const responseHeaders = Object.fromEntries(
    Object.keys(components.headers).map((name) => [name, { $ref: `#/components/headers/${name}` }]),
  );
  for (const item of Object.values(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item as Record<string, unknown>)) {
      if (!op || typeof op !== 'object' || !('responses' in op)) continue;
      const operation = op as { parameters?: unknown[]; responses: Record<string, { headers?: object }> };
      const parameters = [{ $ref: '#/components/parameters/ApiVersion' }];
      if (WRITE_METHODS.has(method)) parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });
      operation.parameters = [...(operation.parameters ?? []), ...parameters];
      for (const response of Object.values(operation.responses)) {
        if (response && typeof response === 'object' && !('$ref' in response)) {
          response.headers = { ...responseHeaders, ...response.headers };
        }
      }
    }
  }
}
