import { ZArtifactVersionPathParams, ZArtifactView } from '@convene/contract';
import { restoreArtifactVersion } from '@convene/core';
import { procedure } from '../trpc';

export const restoreArtifactVersionProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'POST',
      path: '/hub/space/{spaceId}/artifact/{artifactId}/versions/{version}/restore',
      operationId: 'restoreArtifactVersion',
      tags: ['artifacts'],
      summary: "Write an old version's content as a new version (lock holder only)",
      errorResponses: [401, 404, 423, 429],
    },
  })
  .input(ZArtifactVersionPathParams)
  .output(ZArtifactView)
  .mutation(({ ctx, input }) => restoreArtifactVersion({ deps: ctx.deps, ...input, key: ctx.key }));
