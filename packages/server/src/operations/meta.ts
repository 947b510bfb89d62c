import { operations as contract } from '@convene/contract';
import { deprecationPolicyHandler } from '../routes/deprecation';
import { openApiHandler } from '../routes/openapi';
import { type Declaration, operation, route } from './declare';

/** The service describing itself: health, its OpenAPI document, its version policy. */
export const metaOperations: Declaration[] = [
  operation(contract.health, { run: async () => ({ status: 'ok' as const }) }),
  route('/openapi.json', { GET: {}, handler: openApiHandler }),
  route('/.well-known/deprecation-policy', { GET: {}, handler: deprecationPolicyHandler }),
];
