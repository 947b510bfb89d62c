import { ZSpaceIdParam, ZSpaceView } from '@convene/contract';
import { getSpace } from '@convene/core';
import { procedure } from '../trpc';

export const getSpaceProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'GET',
      path: '/hub/space/{spaceId}',
      operationId: 'getSpace',
      tags: ['spaces'],
      summary: 'Read a space with its participants and artifacts (any key of the space)',
      errorResponses: [401, 404, 429],
    },
  })
  .input(ZSpaceIdParam)
  .output(ZSpaceView)
  .query(({ ctx, input }) => getSpace({ deps: ctx.deps, spaceId: input.spaceId, key: ctx.key }));
