import { ZOk, ZParticipantPathParams } from '@convene/contract';
import { kickParticipant } from '@convene/core';
import { procedure } from '../trpc';

export const kickParticipantProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'POST',
      path: '/hub/space/{spaceId}/participants/{participantId}/kick',
      operationId: 'kickParticipant',
      tags: ['participants'],
      summary: 'Remove a participant; its key stops working and its locks are released (owner key)',
      errorResponses: [401, 404, 409, 429],
    },
  })
  .input(ZParticipantPathParams)
  .output(ZOk)
  .mutation(({ ctx, input }) => kickParticipant({ deps: ctx.deps, ...input, key: ctx.key }));
