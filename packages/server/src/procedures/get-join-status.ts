import { ZJoinStatus, ZParticipantPathParams } from '@convene/contract';
import { getJoinStatus } from '@convene/core';
import { procedure } from '../trpc';

export const getJoinStatusProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'GET',
      path: '/hub/space/{spaceId}/join/{participantId}',
      operationId: 'getJoinStatus',
      tags: ['participants'],
      summary:
        'Poll a join awaiting approval with the same invitation key: 202 while pending, 200 with the key once approved',
      errorResponses: [401, 404, 429],
    },
  })
  .input(ZParticipantPathParams)
  .output(ZJoinStatus)
  .query(async ({ ctx, input }) => {
    const { result, pending } = await getJoinStatus({ deps: ctx.deps, ...input, key: ctx.key });
    if (pending) ctx.resMeta = { status: 202 };
    return result;
  });
