import { ZLoginRequest, ZSessionResult } from '@convene/contract';
import { login } from '@convene/core';
import { procedure } from '../trpc';

export const loginProcedure = procedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/hub/auth/login',
      operationId: 'login',
      tags: ['account'],
      summary: 'Log in to a built-in account; returns a dashboard JWT',
      errorResponses: [400, 401, 429],
    },
  })
  .input(ZLoginRequest)
  .output(ZSessionResult)
  .mutation(({ ctx, input }) => login({ deps: ctx.deps, input }));
