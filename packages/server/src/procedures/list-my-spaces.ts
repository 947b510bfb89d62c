import { ZEmpty, ZMySpaces } from '@convene/contract';
import { listMySpaces } from '@convene/core';
import { procedure } from '../trpc';

export const listMySpacesProcedure = procedure
  .meta({
    security: ['dashboardJwt'],
    openapi: {
      method: 'GET',
      path: '/hub/me/spaces',
      operationId: 'listMySpaces',
      tags: ['account'],
      summary: "Spaces created or joined with this human's X-User-Token",
      errorResponses: [401, 429],
    },
  })
  .input(ZEmpty)
  .output(ZMySpaces)
  .query(({ ctx }) => listMySpaces({ deps: ctx.deps, bearer: ctx.bearer }));
