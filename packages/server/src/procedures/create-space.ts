import { ZCreateSpaceRequest, ZCreateSpaceResult } from '@convene/contract';
import { createSpace } from '@convene/core';
import { procedure } from '../trpc';

export const createSpaceProcedure = procedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/hub/space',
      operationId: 'createSpace',
      tags: ['spaces'],
      summary: 'Create a meeting space; mints the owner key',
      errorResponses: [400, 429],
    },
  })
  .input(ZCreateSpaceRequest)
  .output(ZCreateSpaceResult)
  .mutation(async ({ ctx, input }) => createSpace({ deps: ctx.deps, input, userToken: ctx.userToken }));
