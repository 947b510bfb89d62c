import { ZInvitationResult, ZSpaceIdParam } from '@convene/contract';
import { createInvitation } from '@convene/core';
import { procedure } from '../trpc';

export const createInvitationProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'POST',
      path: '/hub/space/{spaceId}/invite',
      operationId: 'createInvitation',
      tags: ['invitations'],
      summary: 'Mint an invitation key with its browser and agent links (owner key, no body)',
      errorResponses: [401, 404, 409, 429],
    },
  })
  .input(ZSpaceIdParam)
  .output(ZInvitationResult)
  .mutation(({ ctx, input }) => createInvitation({ deps: ctx.deps, spaceId: input.spaceId, key: ctx.key }));
