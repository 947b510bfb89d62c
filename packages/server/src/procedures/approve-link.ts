import { ZOk, ZUserCodeRequest } from '@convene/contract';
import { approveLink } from '@convene/core';
import { procedure } from '../trpc';

export const approveLinkProcedure = procedure
  .meta({
    security: ['dashboardJwt'],
    openapi: {
      method: 'POST',
      path: '/hub/me/link/approve',
      operationId: 'approveLink',
      tags: ['linking'],
      summary: 'Approve a pending link request by its user code; mints the agent a usr_ token',
      errorResponses: [400, 401, 404, 429],
    },
  })
  .input(ZUserCodeRequest)
  .output(ZOk)
  .mutation(({ ctx, input }) => approveLink({ deps: ctx.deps, bearer: ctx.bearer, input }));
