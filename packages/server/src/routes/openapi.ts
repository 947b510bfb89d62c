import type { RouteHandlerMethod } from 'fastify';
import type { RouteScope } from './scope';

/** `/openapi.json`: the document derived from the declarations, serialised on first request. */
export function openApiHandler({ api }: RouteScope): RouteHandlerMethod {
  let cached: string | undefined;
  return async (_request, reply) => {
    cached ??= JSON.stringify(api.openapi());
    return reply.type('application/json; charset=utf-8').send(cached);
  };
}
