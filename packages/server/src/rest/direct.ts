import { type Deps, isAssembled, jsonWithParticipants } from '@convene/core';
import type { RouteOptions } from 'fastify';
import { readsConfig } from '../http/client';
import { guardOf, sendReplay } from '../http/idempotency';
import { COUNTED_BY_USE_CASE, pendingCountOf } from '../http/rate-limit';
import { hasTimedOut, writeDeadline } from '../http/timeout';
import { fastifyPath, type OperationDeclaration, perform, requireCredential } from '../operations/declare';
import { performOnce } from '../operations/perform-once';
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
    config: {
      ...(declaration.countsRateLimit ? COUNTED_BY_USE_CASE : {}),
      ...readsConfig(contract.security),
      // Whose body does not parse is refused as asked without its credentials, if it was (operationOf).
      operation: contract,
    },
    handler: async (request, reply) => {
      // Answered 503 while its hooks waited (on a database that does not answer): nothing runs.
      if (hasTimedOut(request)) return reply;
      const caller = {
        ...restCaller(deps, request),
        rateLimit: pendingCountOf(request),
        deadline: writeDeadline(request),
      };
      requireCredential(contract, caller);
      const body = request.body && typeof request.body === 'object' ? request.body : {};
      const values = { ...body, ...(request.params as object) };
      const guarded = guardOf(request);
      let answer: Awaited<ReturnType<typeof perform | typeof performOnce>>;
      try {
        answer = guarded
          ? await performOnce(declaration, () => contract.input.parse(values), caller, guarded)
          : await perform(declaration, contract.input.parse(values), caller);
      } catch (error) {
        // Its 503 is out already, and said all there is to say (nothing was written).
        if (hasTimedOut(request)) return reply;
        throw error;
      }
      if ('replay' in answer) return sendReplay(reply, answer.replay);
      reply.code(answer.status).headers(answer.headers);
      const participants = (answer.body as { participants?: unknown } | undefined)?.participants;
      if (!isAssembled(participants)) return reply.send(contract.output.parse(answer.body));
      // Participants of a cached space (participantsForReply), all made by toParticipantView: the
      // rest of the answer is checked here, and their JSON, made once per participant, is put in
      // place (see jsonWithParticipants).
      const checked = contract.output.parse({ ...(answer.body as object), participants: [] });
      return reply
        .type('application/json; charset=utf-8')
        .send(jsonWithParticipants({ ...(checked as object), participants }));
    },
  };
}
