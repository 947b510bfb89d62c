import { ZOk, ZParticipantPathParams } from '@convene/contract';
import { muteParticipant } from '@convene/core';
import { procedure } from '../trpc';

export const muteParticipantProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'POST',
      path: '/hub/space/{spaceId}/participants/{participantId}/mute',
      operationId: 'muteParticipant',
      tags: ['participants'],
      summary: 'Mute an active participant: it reads but cannot send (owner key)',
      errorResponses: [401, 404, 409, 429],
    },
  })
  .input(ZParticipantPathParams)
  .output(ZOk)
  .mutation(({ ctx, input }) => muteParticipant({ deps: ctx.deps, ...input, key: ctx.key }));
