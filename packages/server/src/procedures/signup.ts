import { ZSessionResult, ZSignupRequest } from '@convene/contract';
import { signup } from '@convene/core';
import { procedure } from '../trpc';

export const signupProcedure = procedure
  .meta({
    successStatus: 201,
    openapi: {
      method: 'POST',
      path: '/hub/auth/signup',
      operationId: 'signup',
      tags: ['account'],
      summary: 'Create a built-in account; returns a dashboard JWT',
      errorResponses: [400, 409, 429],
    },
  })
  .input(ZSignupRequest)
  .output(ZSessionResult)
  .mutation(async ({ ctx, input }) => {
    const result = await signup({ deps: ctx.deps, input });
    ctx.resMeta = { status: 201 };
    return result;
  });
