import { ZJoinResult, ZJoinSpaceInput } from '@convene/contract';
import { joinSpace } from '@convene/core';
import { procedure } from '../trpc';

export const joinSpaceProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'POST',
      path: '/hub/space/{spaceId}/join',
      operationId: 'joinSpace',
      tags: ['participants'],
      summary: 'Join with an invitation key: 200 with the key (public space) or 202 to poll (private space)',
      errorResponses: [400, 401, 404, 409, 429],
    },
  })
  .input(ZJoinSpaceInput)
  .output(ZJoinResult)
  .mutation(async ({ ctx, input: { spaceId, ...input } }) => {
    const { result, pending } = await joinSpace({
      deps: ctx.deps,
      spaceId,
      key: ctx.key,
      input,
      userToken: ctx.userToken,
    });
    if (pending && result.statusUrl) ctx.resMeta = { status: 202, headers: { Location: result.statusUrl } };
    return result;
  });
