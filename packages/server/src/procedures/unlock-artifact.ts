import { ZArtifactPathParams, ZArtifactView } from '@convene/contract';
import { unlockArtifact } from '@convene/core';
import { procedure } from '../trpc';

export const unlockArtifactProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'DELETE',
      path: '/hub/space/{spaceId}/artifact/{artifactId}/lock',
      operationId: 'unlockArtifact',
      tags: ['artifacts'],
      summary: 'Release the lock (holder), or force-unlock it (owner)',
      errorResponses: [401, 404, 423, 429],
    },
  })
  .input(ZArtifactPathParams)
  .output(ZArtifactView)
  .mutation(({ ctx, input }) => unlockArtifact({ deps: ctx.deps, ...input, key: ctx.key }));
