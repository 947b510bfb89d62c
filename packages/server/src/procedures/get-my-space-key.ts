import { ZMySpaceKey, ZSpaceIdParam } from '@convene/contract';
import { getMySpaceKey } from '@convene/core';
import { procedure } from '../trpc';

export const getMySpaceKeyProcedure = procedure
  .meta({
    security: ['dashboardJwt', 'userToken'],
    openapi: {
      method: 'GET',
      path: '/hub/space/{spaceId}/key',
      operationId: 'getMySpaceKey',
      tags: ['spaces'],
      summary: 'Recover the space key this human holds (dashboard JWT or X-User-Token)',
      errorResponses: [401, 404, 429],
    },
  })
  .input(ZSpaceIdParam)
  .output(ZMySpaceKey)
  .query(({ ctx, input }) =>
    getMySpaceKey({ deps: ctx.deps, spaceId: input.spaceId, bearer: ctx.bearer, userToken: ctx.userToken }),
  );
