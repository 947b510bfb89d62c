import type { FastifyInstance } from 'fastify';
import type { RawRouteOptions } from '.';

export async function registerAgentRoutes(_app: FastifyInstance, _options: RawRouteOptions): Promise<void> {}
