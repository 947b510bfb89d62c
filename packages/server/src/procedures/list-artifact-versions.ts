import { ZArtifactPathParams, ZArtifactVersionList } from '@convene/contract';
import { listArtifactVersions } from '@convene/core';
import { procedure } from '../trpc';

export const listArtifactVersionsProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'GET',
      path: '/hub/space/{spaceId}/artifact/{artifactId}/versions',
      operationId: 'listArtifactVersions',
      tags: ['artifacts'],
      summary: 'The version history of an artifact, newest first',
      errorResponses: [401, 404, 429],
    },
  })
  .input(ZArtifactPathParams)
  .output(ZArtifactVersionList)
  .query(({ ctx, input }) => listArtifactVersions({ deps: ctx.deps, ...input, key: ctx.key }));
