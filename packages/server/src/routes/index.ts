import type { Deps } from '@convene/core';
import type { FastifyInstance } from 'fastify';
import type { ServerConfig } from '../env';
import { registerAgentRoutes } from './agents';
import { registerArtifactFileRoutes } from './artifact-files';
import { registerDeprecationRoutes } from './deprecation';
import { registerDiscoveryRoutes } from './discovery';
import { registerIdentityRoutes } from './identity';
import { registerOpenApiRoute } from './openapi';
import { registerStreamRoutes } from './stream';
import { registerWebRoutes } from './web';

export interface RawRouteOptions {
  config: ServerConfig;
  deps: Deps;
}

/**
 * The table of raw routes: everything the OpenAPI adapter cannot serve (streams, markdown,
 * discovery documents, MCP, web pages). Each module registers its own Fastify routes; specific
 * routes win over the adapter's wildcard. They pass through the same policy hooks.
 */
export async function registerRawRoutes(app: FastifyInstance, options: RawRouteOptions): Promise<void> {
  registerOpenApiRoute(app, options);
  await registerDiscoveryRoutes(app, options); // /.well-known/oauth-*, /auth.md, /avatar
  await registerDeprecationRoutes(app, options); // /.well-known/deprecation-policy
  await registerStreamRoutes(app, options); // GET .../messages/stream (SSE)
  await registerArtifactFileRoutes(app, options); // download, diff
  await registerIdentityRoutes(app, options); // /.well-known/jwks.json
  await registerAgentRoutes(app, options); // /mcp, /ask, agent.md, /llms.txt
  await registerWebRoutes(app, options); // /, /join, /space, /login, /link, /dashboard, /web/*
}
