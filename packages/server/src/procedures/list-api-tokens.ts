import { ZEmpty, ZTokenList } from '@convene/contract';
import { listApiTokens } from '@convene/core';
import { procedure } from '../trpc';

export const listApiTokensProcedure = procedure
  .meta({
    security: ['dashboardJwt'],
    openapi: {
      method: 'GET',
      path: '/hub/me/tokens',
      operationId: 'listApiTokens',
      tags: ['account'],
      summary: "This human's API tokens (metadata only, never a secret)",
      errorResponses: [401, 429],
    },
  })
  .input(ZEmpty)
  .output(ZTokenList)
  .query(({ ctx }) => listApiTokens({ deps: ctx.deps, bearer: ctx.bearer }));
