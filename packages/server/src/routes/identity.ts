import type { FastifyInstance } from 'fastify';
import { rawPaths } from '../openapi';
import type { RawRouteOptions } from '.';

/**
 * The public keys of dashboard JWTs (`/.well-known/jwks.json`). The key pair is the deployment's,
 * kept in the database, so any node's document verifies any node's tokens.
 */
export async function registerIdentityRoutes(app: FastifyInstance, { deps }: RawRouteOptions): Promise<void> {
  const body = JSON.stringify(deps.sessions.jwks());
  app.get('/.well-known/jwks.json', async (_request, reply) =>
    reply
      .type('application/jwk-set+json; charset=utf-8')
      .header('Cache-Control', 'public, max-age=300')
      .send(body),
  );
  rawPaths['/.well-known/jwks.json'] = {
    get: {
      operationId: 'getJwks',
      tags: ['account'],
      summary: 'Public keys (JWKS) that verify dashboard JWTs (EdDSA)',
      security: [],
      responses: {
        200: {
          description: 'A JSON Web Key Set',
          content: {
            'application/jwk-set+json': {
              schema: {
                type: 'object',
                required: ['keys'],
                properties: { keys: { type: 'array', items: { type: 'object' } } },
              },
            },
          },
        },
      },
    },
  };
}
