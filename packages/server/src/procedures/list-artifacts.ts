import { ZArtifactList, ZSpaceIdParam } from '@convene/contract';
import { listArtifacts } from '@convene/core';
import { procedure } from '../trpc';

export const listArtifactsProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'GET',
      path: '/hub/space/{spaceId}/artifact',
      operationId: 'listArtifacts',
      tags: ['artifacts'],
      summary: 'List the artifacts of a space with their content (any participant key, muted included)',
      errorResponses: [401, 404, 429],
    },
  })
  .input(ZSpaceIdParam)
  .output(ZArtifactList)
  .query(({ ctx, input }) => listArtifacts({ deps: ctx.deps, spaceId: input.spaceId, key: ctx.key }));
