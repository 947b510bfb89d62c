import { ZArtifactPathParams, ZArtifactView } from '@convene/contract';
import { getArtifact } from '@convene/core';
import { procedure } from '../trpc';

export const getArtifactProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'GET',
      path: '/hub/space/{spaceId}/artifact/{artifactId}',
      operationId: 'getArtifact',
      tags: ['artifacts'],
      summary: 'Read one artifact with its full content',
      errorResponses: [401, 404, 429],
    },
  })
  .input(ZArtifactPathParams)
  .output(ZArtifactView)
  .query(({ ctx, input }) => getArtifact({ deps: ctx.deps, ...input, key: ctx.key }));
