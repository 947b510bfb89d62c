import type { Deps } from '@convene/core';
import type { FastifyInstance } from 'fastify';
import type { OpenAPIObject } from 'trpc-to-openapi';
import type { ServerConfig } from '../env';
import type { IdempotencyGate } from '../http/idempotency';
import type { Tool } from '../mcp/tool';

/**
 * What a raw route's handler is built with, once, when the route table is registered. The API's
 * own description (its OpenAPI document and MCP tools, both derived from the declarations) comes
 * in here rather than by import, so a route never imports the list that declares it.
 */
export interface RouteScope {
  app: FastifyInstance;
  config: ServerConfig;
  deps: Deps;
  /** Idempotency-Key records, for writes that are not REST routes (MCP tool calls). */
  idempotency: IdempotencyGate;
  api: {
    /** The OpenAPI document, built on first use. */
    openapi(): OpenAPIObject;
    tools: readonly Tool[];
  };
}
