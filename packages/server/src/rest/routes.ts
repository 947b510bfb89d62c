import type { FastifyInstance } from 'fastify';
import { readsConfig } from '../http/client';
import { PAGE_BUDGET } from '../http/rate-limit';
import type { Declaration } from '../operations/declare';
import { fastifyPath } from '../operations/declare';
import type { RouteScope } from '../routes/scope';
import { directRoute } from './direct';

/**
 * The route table beside the OpenAPI adapter: every raw route of the declarations and every
 * operation bound directly. Specific routes win over the adapter's wildcard, and they pass
 * through the same policy hooks.
 */
export function registerRoutes(
  app: FastifyInstance,
  declarations: readonly Declaration[],
  scope: RouteScope,
): void {
  for (const declaration of declarations) {
    if (declaration.kind === 'route') {
      const handler = declaration.handler(scope);
      const url = declaration.url ?? fastifyPath(declaration.path);
      const config = {
        ...(declaration.longWait ? { longWait: true } : {}),
        ...(declaration.page ? PAGE_BUDGET : {}),
        ...readsConfig(declaration.reads ?? []),
      };
      for (const method of Object.keys(declaration.methods)) app.route({ method, url, handler, config });
    } else if (declaration.kind === 'operation' && declaration.direct) {
      app.route(directRoute(declaration, scope.deps));
    }
  }
}
