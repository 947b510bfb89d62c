import { ZArtifactView, ZCreateArtifactRequest } from '@convene/contract';
import { createArtifact } from '@convene/core';
import { procedure } from '../trpc';

export const createArtifactProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'POST',
      path: '/hub/space/{spaceId}/artifact',
      operationId: 'createArtifact',
      tags: ['artifacts'],
      summary: 'Create a markdown artifact (owner or active participant; version 1, unlocked)',
      errorResponses: [400, 401, 403, 404, 409, 429],
    },
  })
  .input(ZCreateArtifactRequest)
  .output(ZArtifactView)
  .mutation(({ ctx, input: { spaceId, ...input } }) =>
    createArtifact({ deps: ctx.deps, spaceId, key: ctx.key, input }),
  );
