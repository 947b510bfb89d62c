import { ZArtifactPathParams, ZLockResult } from '@convene/contract';
import { heartbeatArtifactLock } from '@convene/core';
import { procedure } from '../trpc';

export const heartbeatArtifactLockProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'POST',
      path: '/hub/space/{spaceId}/artifact/{artifactId}/lock/heartbeat',
      operationId: 'heartbeatArtifactLock',
      tags: ['artifacts'],
      summary: 'Extend the lock you hold without writing',
      errorResponses: [401, 404, 423, 429],
    },
  })
  .input(ZArtifactPathParams)
  .output(ZLockResult)
  .mutation(({ ctx, input }) => heartbeatArtifactLock({ deps: ctx.deps, ...input, key: ctx.key }));
