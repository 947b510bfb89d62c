import { ZStartLinkRequest, ZStartLinkResult } from '@convene/contract';
import { startLink } from '@convene/core';
import { procedure } from '../trpc';

export const startLinkProcedure = procedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/hub/link/start',
      operationId: 'startLink',
      tags: ['linking'],
      summary: 'Start the browser-link flow (device-flow style); returns the device code once',
      errorResponses: [400, 429],
    },
  })
  .input(ZStartLinkRequest)
  .output(ZStartLinkResult)
  .mutation(({ ctx, input }) => startLink({ deps: ctx.deps, input }));
