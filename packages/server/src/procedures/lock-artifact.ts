import { ZArtifactPathParams, ZLockResult } from '@convene/contract';
import { lockArtifact } from '@convene/core';
import { procedure } from '../trpc';

export const lockArtifactProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'POST',
      path: '/hub/space/{spaceId}/artifact/{artifactId}/lock',
      operationId: 'lockArtifact',
      tags: ['artifacts'],
      summary: 'Take (or refresh) the exclusive edit lock (owner or active participant)',
      errorResponses: [401, 403, 404, 423, 429],
    },
  })
  .input(ZArtifactPathParams)
  .output(ZLockResult)
  .mutation(({ ctx, input }) => lockArtifact({ deps: ctx.deps, ...input, key: ctx.key }));
