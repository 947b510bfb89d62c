import type { FastifyInstance } from 'fastify';
import { deprecationPolicyDocument } from '../http/versioning';
import type { RawRouteOptions } from '.';

/** `/.well-known/deprecation-policy`, from the same version table as the Deprecation and Sunset headers. */
export async function registerDeprecationRoutes(
  app: FastifyInstance,
  { config, deps }: RawRouteOptions,
): Promise<void> {
  app.get('/.well-known/deprecation-policy', async (_request, reply) =>
    reply
      .type('application/json; charset=utf-8')
      .send(deprecationPolicyDocument(config.apiVersions, deps.clock.now(), config.publicUrl)),
  );
}
