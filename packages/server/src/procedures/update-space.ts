import { ZOk, ZUpdateSpaceRequest } from '@convene/contract';
import { updateSpace } from '@convene/core';
import { procedure } from '../trpc';

export const updateSpaceProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'PUT',
      path: '/hub/space/{spaceId}',
      operationId: 'updateSpace',
      tags: ['spaces'],
      summary: 'Change the name, description or agenda of a space (owner key)',
      errorResponses: [400, 401, 404, 409, 429],
    },
  })
  .input(ZUpdateSpaceRequest)
  .output(ZOk)
  .mutation(({ ctx, input: { spaceId, ...input } }) =>
    updateSpace({ deps: ctx.deps, spaceId, key: ctx.key, input }),
  );
