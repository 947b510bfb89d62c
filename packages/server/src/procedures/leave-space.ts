import { ZOk, ZSpaceIdParam } from '@convene/contract';
import { leaveSpace } from '@convene/core';
import { procedure } from '../trpc';

export const leaveSpaceProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'POST',
      path: '/hub/space/{spaceId}/leave',
      operationId: 'leaveSpace',
      tags: ['participants'],
      summary: 'Leave the space; the key stops working (participant key)',
      errorResponses: [401, 404, 409, 429],
    },
  })
  .input(ZSpaceIdParam)
  .output(ZOk)
  .mutation(({ ctx, input }) => leaveSpace({ deps: ctx.deps, spaceId: input.spaceId, key: ctx.key }));
