import type { FastifyInstance } from 'fastify';
import type { RawRouteOptions } from '.';

export async function registerIdentityRoutes(
  _app: FastifyInstance,
  _options: RawRouteOptions,
): Promise<void> {}
