import { ZTokenIdParam } from '@convene/contract';
import { revokeApiToken } from '@convene/core';
import { z } from 'zod';
import { procedure } from '../trpc';

export const revokeApiTokenProcedure = procedure
  .meta({
    security: ['dashboardJwt'],
    successStatus: 204,
    openapi: {
      method: 'DELETE',
      path: '/hub/me/tokens/{tokenId}',
      operationId: 'revokeApiToken',
      tags: ['account'],
      summary: 'Revoke an API token, effective at once',
      errorResponses: [401, 404, 429],
    },
  })
  .input(ZTokenIdParam)
  .output(z.void())
  .mutation(async ({ ctx, input }) => {
    await revokeApiToken({ deps: ctx.deps, bearer: ctx.bearer, tokenId: input.tokenId });
    ctx.resMeta = { status: 204 };
  });
