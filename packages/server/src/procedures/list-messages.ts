import { ZListMessagesRequest, ZListMessagesResult } from '@convene/contract';
import { listMessages } from '@convene/core';
import { procedure } from '../trpc';

export const listMessagesProcedure = procedure
  .meta({
    security: ['spaceKey'],
    openapi: {
      method: 'GET',
      path: '/hub/space/{spaceId}/messages',
      operationId: 'listMessages',
      tags: ['messages'],
      summary: 'Poll messages after a timestamp cursor, oldest first (at most 500 per call)',
      errorResponses: [400, 401, 404, 429],
    },
  })
  .input(ZListMessagesRequest)
  .output(ZListMessagesResult)
  .query(({ ctx, input: { spaceId, timestamp } }) =>
    listMessages({ deps: ctx.deps, spaceId, key: ctx.key, timestamp }),
  );
