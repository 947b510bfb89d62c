import { operations as contract } from '@convene/contract';
import { checkDatabase } from '@convene/core';
import { deprecationPolicyHandler } from '../routes/deprecation';
import { openApiHandler } from '../routes/openapi';
import { type Declaration, operation, route } from './declare';

const jsonDocument = (operationId: string, summary: string) => ({
  operationId,
  tags: ['meta'],
  summary,
  security: [],
  responses: {
    '200': { description: summary, content: { 'application/json': { schema: { type: 'object' } } } },
  },
});

/** The service describing itself: health, its OpenAPI document, its version policy. */
export const metaOperations: Declaration[] = [
  // Ok while the database answers (checkDatabase: at most about one query a second, however
  // many probes); 503 with Retry-After while it does not, as every route then.
  operation(contract.health, {
    run: async (_input, { deps }) => {
      await checkDatabase(deps.db);
      return { status: 'ok' as const };
    },
  }),
  route('/openapi.json', {
    GET: jsonDocument('getOpenApiDocument', 'This OpenAPI 3.1 document'),
    handler: openApiHandler,
  }),
  route('/.well-known/deprecation-policy', {
    GET: jsonDocument(
      'getDeprecationPolicy',
      'The deprecation policy: current version, deprecation window, the headers that announce a sunset',
    ),
    handler: deprecationPolicyHandler,
  }),
];
