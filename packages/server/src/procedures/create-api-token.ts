import { ZCreateApiTokenRequest, ZCreateApiTokenResult } from '@convene/contract';
import { createApiToken } from '@convene/core';
import { procedure } from '../trpc';

export const createApiTokenProcedure = procedure
  .meta({
    security: ['dashboardJwt'],
    successStatus: 201,
    openapi: {
      method: 'POST',
      path: '/hub/me/tokens',
      operationId: 'createApiToken',
      tags: ['account'],
      summary: 'Mint a usr_ API token (shown once)',
      errorResponses: [400, 401, 429],
    },
  })
  .input(ZCreateApiTokenRequest)
  .output(ZCreateApiTokenResult)
  .mutation(async ({ ctx, input }) => {
    const result = await createApiToken({ deps: ctx.deps, bearer: ctx.bearer, input });
    ctx.resMeta = { status: 201 };
    return result;
  });
