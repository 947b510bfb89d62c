import type { RouteHandlerMethod } from 'fastify';
import { MEDIA, sendRaw } from '../http/reply';
import type { RouteScope } from './scope';

/** `/openapi.json`: the document derived from the declarations, serialised on first request. */
export function openApiHandler({ api }: RouteScope): RouteHandlerMethod {
  let cached: string | undefined;
  return async (_request, reply) => {
    cached ??= JSON.stringify(api.openapi());
    return sendRaw(reply, { type: MEDIA.json, body: cached });
  };
}
