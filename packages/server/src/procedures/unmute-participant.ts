import { ZOk, ZParticipantPathParams } from '@convene/contract';
import { unmuteParticipant } from '@convene/core';
import { procedure } from '../trpc';

export const unmuteParticipantProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'POST',
      path: '/hub/space/{spaceId}/participants/{participantId}/unmute',
      operationId: 'unmuteParticipant',
      tags: ['participants'],
      summary: 'Unmute a muted participant (owner key)',
      errorResponses: [401, 404, 409, 429],
    },
  })
  .input(ZParticipantPathParams)
  .output(ZOk)
  .mutation(({ ctx, input }) => unmuteParticipant({ deps: ctx.deps, ...input, key: ctx.key }));
