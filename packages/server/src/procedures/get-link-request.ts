import { ZLinkRequestView } from '@convene/contract';
import { getLinkRequest } from '@convene/core';
import { z } from 'zod';
import { procedure } from '../trpc';

export const getLinkRequestProcedure = procedure
  .meta({
    security: ['dashboardJwt'],
    openapi: {
      method: 'GET',
      path: '/hub/me/link/{userCode}',
      operationId: 'getLinkRequest',
      tags: ['linking'],
      summary: 'A link request as the approval page shows it',
      errorResponses: [401, 404, 429],
    },
  })
  .input(z.object({ userCode: z.string() }))
  .output(ZLinkRequestView)
  .query(({ ctx, input }) =>
    getLinkRequest({ deps: ctx.deps, bearer: ctx.bearer, userCode: input.userCode }),
  );
