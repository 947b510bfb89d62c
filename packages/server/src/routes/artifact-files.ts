import { diffArtifactVersions, getArtifact } from '@convene/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { headerValue } from '../trpc';
import type { RawRouteOptions } from '.';

interface ArtifactParams {
  spaceId: string;
  artifactId: string;
}

const spaceKey = (request: FastifyRequest): string | undefined =>
  headerValue(request, 'x-private-key') || undefined;

/**
 * The two artifact routes that answer something other than JSON: the markdown download and the
 * unified diff between two versions. Errors thrown here are DomainErrors, answered as JSON by
 * the app's one error handler.
 */
export async function registerArtifactFileRoutes(
  app: FastifyInstance,
  { deps }: RawRouteOptions,
): Promise<void> {
  app.get<{ Params: ArtifactParams }>(
    '/hub/space/:spaceId/artifact/:artifactId/download',
    async (request, reply) => {
      const { spaceId, artifactId } = request.params;
      const artifact = await getArtifact({ deps, spaceId, artifactId, key: spaceKey(request) });
      return reply
        .type('text/markdown; charset=utf-8')
        .header('Content-Disposition', contentDisposition(`${artifact.name}.md`))
        .header('Cache-Control', 'no-store')
        .send(artifact.content);
    },
  );

  app.get<{ Params: ArtifactParams; Querystring: { from?: string; to?: string } }>(
    '/hub/space/:spaceId/artifact/:artifactId/diff',
    async (request, reply) => {
      const { spaceId, artifactId } = request.params;
      const diff = await diffArtifactVersions({
        deps,
        spaceId,
        artifactId,
        from: single(request.query.from),
        to: single(request.query.to),
        key: spaceKey(request),
      });
      return reply.type('text/x-diff; charset=utf-8').header('Cache-Control', 'no-store').send(diff);
    },
  );
}

/** A repeated query parameter counts by its first value. */
function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * `attachment; filename="…"` per RFC 6266: characters that cannot stand in a quoted ASCII
 * filename (non-ASCII, controls, quote, backslash, and path separators, which recipients would
 * strip anyway) become `_` there, and then the exact name follows in `filename*` (RFC 8187).
 */
export function contentDisposition(fileName: string): string {
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\/]/gu, '_');
  if (fallback === fileName) return `attachment; filename="${fileName}"`;
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeRfc8187(fileName)}`;
}

/** Percent-encodes UTF-8 bytes except RFC 8187's attr-char set. */
function encodeRfc8187(value: string): string {
  // encodeURIComponent throws on a lone surrogate; such a name can only be shown as U+FFFD.
  const wellFormed = value.replace(
    /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    '\ufffd',
  );
  return encodeURIComponent(wellFormed).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

const pathParameters = [
  { name: 'spaceId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
  { name: 'artifactId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
];

const commonErrors = {
  '401': errorResponse('Key missing, unknown, or of the wrong type; carries WWW-Authenticate'),
  '404': errorResponse('No such space, artifact or version'),
  '429': errorResponse('Rate limit exceeded; carries Retry-After'),
};

/** OpenAPI documentation of the raw artifact routes, merged into /openapi.json. */
export const artifactFilePaths: Record<string, Record<string, unknown>> = {
  '/hub/space/{spaceId}/artifact/{artifactId}/download': {
    get: {
      operationId: 'downloadArtifact',
      tags: ['artifacts'],
      summary: 'Download the content as a markdown attachment (any participant key, muted included)',
      security: [{ spaceKey: [] }],
      parameters: pathParameters,
      responses: {
        '200': {
          description:
            'The raw markdown, not JSON. `Content-Disposition: attachment; filename="<name>.md"`, with the exact name in `filename*` (RFC 6266) when it is not plain ASCII.',
          headers: {
            'Content-Disposition': { schema: { type: 'string' } },
          },
          content: { 'text/markdown': { schema: { type: 'string' } } },
        },
        ...commonErrors,
      },
    },
  },
  '/hub/space/{spaceId}/artifact/{artifactId}/diff': {
    get: {
      operationId: 'diffArtifactVersions',
      tags: ['artifacts'],
      summary: 'A unified diff between two versions of an artifact',
      security: [{ spaceKey: [] }],
      parameters: [
        ...pathParameters,
        {
          name: 'from',
          in: 'query',
          required: true,
          description: 'The version the diff starts from',
          schema: { type: 'integer', minimum: 1 },
        },
        {
          name: 'to',
          in: 'query',
          required: true,
          description: 'The version the diff leads to',
          schema: { type: 'integer', minimum: 1 },
        },
      ],
      responses: {
        '200': {
          description:
            'A unified diff (`diff -u` format, 3 lines of context) from version `from` to version `to`; an empty body when the contents are equal.',
          content: { 'text/x-diff': { schema: { type: 'string' } } },
        },
        '400': errorResponse('from or to missing or not a number'),
        ...commonErrors,
      },
    },
  },
};
