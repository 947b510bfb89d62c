import { z } from 'zod';
import { procedure } from '../trpc';

export const healthProcedure = procedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/api/health',
      operationId: 'health',
      tags: ['meta'],
      summary: 'Health probe',
    },
  })
  .input(z.object({}))
  .output(z.object({ status: z.literal('ok') }))
  .query(() => ({ status: 'ok' as const }));
