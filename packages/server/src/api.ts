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
 * Writes whose Idempotency-Key is never replayed (`replayable: false` in the contract): calls
 * that mint credentials for whoever calls them anonymously (a retry must mint afresh), and /ask. Path
 * templates: the idempotency hook matches `{name}` segments.
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
    .map((contract) => `${contract.method} ${contract.path}`);
});

export { declarations };
