import { ZOk, ZUserCodeRequest } from '@convene/contract';
import { denyLink } from '@convene/core';
import { procedure } from '../trpc';

export const denyLinkProcedure = procedure
  .meta({
    security: ['dashboardJwt'],
    openapi: {
      method: 'POST',
      path: '/hub/me/link/deny',
      operationId: 'denyLink',
      tags: ['linking'],
      summary: 'Refuse a pending link request by its user code',
      errorResponses: [400, 401, 404, 429],
    },
  })
  .input(ZUserCodeRequest)
  .output(ZOk)
  .mutation(({ ctx, input }) => denyLink({ deps: ctx.deps, bearer: ctx.bearer, input }));
