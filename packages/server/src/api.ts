import { mcpTools } from './mcp/tools';
import { declarations } from './operations';
import { buildOpenApiDocument as documentOf } from './rest/openapi';
import { routerOf } from './rest/procedures';

/** The tRPC router of every declared operation (served at REST paths by trpc-to-openapi). */
export const appRouter = routerOf(declarations);
export type AppRouter = typeof appRouter;

/** The MCP tool table. */
export const tools = mcpTools(declarations);

/** The OpenAPI 3.1 document the service publishes at /openapi.json. */
export const buildOpenApiDocument = (publicUrl: string) => documentOf(publicUrl, declarations, appRouter);

/**
 * Writes whose Idempotency-Key is never replayed (`replayable: false` in the contract): the
 * anonymous calls that mint credentials (a retry must mint afresh), and /ask.
 */
export const neverReplayed: readonly string[] = declarations.flatMap((declaration) => {
  const contracts =
    declaration.kind === 'operation'
      ? [declaration.contract]
      : declaration.kind === 'route'
        ? Object.values(declaration.methods).flatMap((method) => (method?.contract ? [method.contract] : []))
        : [];
  return contracts
    .filter((contract) => !contract.replayable && contract.method !== 'GET')
    .map((contract) => {
      // The idempotency hook matches the request's own path: a template would never match.
      if (contract.path.includes('{'))
        throw new Error(`${contract.operationId}: a write never replayed cannot have path parameters`);
      return `${contract.method} ${contract.path}`;
    });
});

export { declarations };
