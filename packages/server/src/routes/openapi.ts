import type { FastifyInstance } from 'fastify';
import { buildOpenApiDocument } from '../openapi';
import type { RawRouteOptions } from '.';

export function registerOpenApiRoute(app: FastifyInstance, { config }: RawRouteOptions): void {
  let cached: string | undefined;
  app.get('/openapi.json', async (_request, reply) => {
    cached ??= JSON.stringify(buildOpenApiDocument(config.publicUrl));
    return reply.type('application/json; charset=utf-8').send(cached);
  });
}
