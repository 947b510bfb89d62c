import { ZOk, ZParticipantPathParams } from '@convene/contract';
import { approveParticipant } from '@convene/core';
import { procedure } from '../trpc';

export const approveParticipantProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'POST',
      path: '/hub/space/{spaceId}/participants/{participantId}/approve',
      operationId: 'approveParticipant',
      tags: ['participants'],
      summary: 'Admit a participant waiting for approval (owner key)',
      errorResponses: [401, 404, 409, 429],
    },
  })
  .input(ZParticipantPathParams)
  .output(ZOk)
  .mutation(({ ctx, input }) => approveParticipant({ deps: ctx.deps, ...input, key: ctx.key }));
