import type { FastifyInstance } from 'fastify';
import { registerMcpRoute } from '../mcp/http';
import type { RawRouteOptions } from '.';

/** Agent-facing surfaces: the MCP endpoint, natural-language /ask, agent cards and /llms.txt. */
export async function registerAgentRoutes(app: FastifyInstance, { deps }: RawRouteOptions): Promise<void> {
  registerMcpRoute(app, { deps });
}
