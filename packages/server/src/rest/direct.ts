import type { Deps } from '@convene/core';
import type { RouteOptions } from 'fastify';
import { fastifyPath, type OperationDeclaration, perform } from '../operations/declare';
import { restCaller } from './caller';

/**
 * A declared operation bound as its own Fastify route (`direct`): what its procedure does (the
 * contract's input from the path parameters over the JSON body, the use case, the answer checked
 * against the contract's output), without the OpenAPI adapter's per-request conversion. The
 * procedure still documents it; errors go to the one error handler, as everywhere.
 */
export function directRoute(declaration: OperationDeclaration, deps: Deps): RouteOptions {
  const { contract } = declaration;
  // Query strings would need the adapter's coercion; the hot paths are JSON writes.
  if (contract.method === 'GET') throw new Error(`${contract.operationId}: only writes are bound directly`);
  return {
    method: contract.method,
    url: fastifyPath(contract.path),
    handler: async (request, reply) => {
      const body = request.body && typeof request.body === 'object' ? request.body : {};
      const input = contract.input.parse({ ...body, ...(request.params as object) });
      const answer = await perform(declaration, input, restCaller(deps, request));
      return reply.code(answer.status).headers(answer.headers).send(contract.output.parse(answer.body));
    },
  };
}
