import { ZSendMessageRequest, ZSendMessageResult } from '@convene/contract';
import { sendMessage } from '@convene/core';
import { procedure } from '../trpc';

export const sendMessageProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'POST',
      path: '/hub/space/{spaceId}/messages',
      operationId: 'sendMessage',
      tags: ['messages'],
      summary: 'Post a message (owner or active participant; muted participants get 403)',
      errorResponses: [400, 401, 403, 404, 409, 429],
    },
  })
  .input(ZSendMessageRequest)
  .output(ZSendMessageResult)
  .mutation(({ ctx, input: { spaceId, content, type } }) =>
    sendMessage({ deps: ctx.deps, spaceId, key: ctx.key, input: { content, type } }),
  );
