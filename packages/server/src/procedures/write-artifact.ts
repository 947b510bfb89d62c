import { ZArtifactView, ZWriteArtifactRequest } from '@convene/contract';
import { writeArtifact } from '@convene/core';
import { procedure } from '../trpc';

export const writeArtifactProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'PATCH',
      path: '/hub/space/{spaceId}/artifact/{artifactId}',
      operationId: 'writeArtifact',
      tags: ['artifacts'],
      summary:
        'Overwrite the content (lock holder only): version bumped, lock refreshed; optional baseVersion check (409)',
      errorResponses: [400, 401, 404, 409, 423, 429],
    },
  })
  .input(ZWriteArtifactRequest)
  .output(ZArtifactView)
  .mutation(({ ctx, input: { spaceId, artifactId, ...input } }) =>
    writeArtifact({ deps: ctx.deps, spaceId, artifactId, key: ctx.key, input }),
  );
