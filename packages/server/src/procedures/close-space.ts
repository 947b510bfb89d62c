import { ZOk, ZSpaceIdParam } from '@convene/contract';
import { closeSpace } from '@convene/core';
import { procedure } from '../trpc';

export const closeSpaceProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'DELETE',
      path: '/hub/space/{spaceId}',
      operationId: 'closeSpace',
      tags: ['spaces'],
      summary: 'Close a space for good: every key stops working (owner key)',
      errorResponses: [401, 404, 409, 429],
    },
  })
  .input(ZSpaceIdParam)
  .output(ZOk)
  .mutation(({ ctx, input }) => closeSpace({ deps: ctx.deps, spaceId: input.spaceId, key: ctx.key }));
