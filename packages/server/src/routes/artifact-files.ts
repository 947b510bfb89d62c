import type { FastifyInstance } from 'fastify';
import type { RawRouteOptions } from '.';

export async function registerArtifactFileRoutes(
  _app: FastifyInstance,
  _options: RawRouteOptions,
): Promise<void> {}
