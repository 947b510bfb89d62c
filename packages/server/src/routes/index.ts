import type { Deps } from '@convene/core';
import type { FastifyInstance } from 'fastify';
import type { ServerConfig } from '../env';
import { registerOpenApiRoute } from './openapi';

export interface RawRouteOptions {
  config: ServerConfig;
  deps: Deps;
}

/**
 * The table of raw routes: everything the OpenAPI adapter cannot serve (streams, markdown,
 * discovery documents, MCP, web pages). Each module registers its own Fastify routes; specific
 * routes win over the adapter's wildcard.
 */
export async function registerRawRoutes(app: FastifyInstance, options: RawRouteOptions): Promise<void> {
  registerOpenApiRoute(app, options);
}
