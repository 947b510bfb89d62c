import { ZEmpty, ZUserView } from '@convene/contract';
import { getMe } from '@convene/core';
import { procedure } from '../trpc';

export const getMeProcedure = procedure
  .meta({
    security: ['dashboardJwt'],
    openapi: {
      method: 'GET',
      path: '/hub/me',
      operationId: 'getMe',
      tags: ['account'],
      summary: 'The logged-in human',
      errorResponses: [401, 429],
    },
  })
  .input(ZEmpty)
  .output(ZUserView)
  .query(({ ctx }) => getMe({ deps: ctx.deps, bearer: ctx.bearer }));
