import { ZPollLinkRequest, ZPollLinkResult } from '@convene/contract';
import { pollLink } from '@convene/core';
import { procedure } from '../trpc';

export const pollLinkProcedure = procedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/hub/link/poll',
      operationId: 'pollLink',
      tags: ['linking'],
      summary: 'Poll a link request: pending, denied, or approved with the usr_ token exactly once',
      errorResponses: [400, 404, 410, 429],
    },
  })
  .input(ZPollLinkRequest)
  .output(ZPollLinkResult)
  .mutation(({ ctx, input }) => pollLink({ deps: ctx.deps, input }));
