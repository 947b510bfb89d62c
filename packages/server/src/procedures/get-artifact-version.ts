import { ZArtifactVersionPathParams, ZArtifactView } from '@convene/contract';
import { getArtifactVersion } from '@convene/core';
import { procedure } from '../trpc';

export const getArtifactVersionProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'GET',
      path: '/hub/space/{spaceId}/artifact/{artifactId}/versions/{version}',
      operationId: 'getArtifactVersion',
      tags: ['artifacts'],
      summary: 'The artifact as it was at one version (no lock fields)',
      errorResponses: [401, 404, 429],
    },
  })
  .input(ZArtifactVersionPathParams)
  .output(ZArtifactView)
  .query(({ ctx, input }) => getArtifactVersion({ deps: ctx.deps, ...input, key: ctx.key }));
