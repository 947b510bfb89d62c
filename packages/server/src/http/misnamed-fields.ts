import type { OperationContract } from '@convene/contract';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { z } from 'zod';
import { fixedFieldsOf, misnamed } from '../misnamed';
import { operationOf } from '../rest/route-table';

/** The names each operation takes: its path parameters, body fields or query parameters. */
const namesOf = new WeakMap<OperationContract, readonly string[]>();

function names(contract: OperationContract): readonly string[] {
  let known = namesOf.get(contract);
  if (!known) {
    known = Object.keys((contract.input as z.ZodObject).shape);
    namesOf.set(contract, known);
  }
  return known;
}

/**
 * A REST request's body field that is a slip of one its operation takes and was not given
 * (`{"private": true}` for `privacy`, `mention` for `mentions`): 400, naming the one meant, before
 * anything runs. Dropped, as any unknown field is, it did something else than asked (a public
 * space, a message that mentions nobody), and said it had succeeded. As MCP tools refuse a
 * misnamed argument (see misnamed.ts); so is a field its update cannot change (`privacy`, `ttl`
 * of updateSpace: fixedFieldsOf). Query parameters are not looked at: decisions.md has
 * unknown query parameters ignored, every one (`?Timestamp=` as `?foo=`).
 * A callback hook, not an async one: on every request of the hot paths, it costs no promise.
 */
export function refuseMisnamedFields(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  done(slipIn(request));
}

function slipIn(request: FastifyRequest) {
  const contract = operationOf(request);
  if (!contract || contract.method === 'GET' || contract.method === 'DELETE') return undefined;
  const given = request.body;
  if (!given || typeof given !== 'object' || Array.isArray(given)) return undefined;
  const known = names(contract);
  // Nearly always: every name is one the operation takes, and nothing more is made.
  if (Object.keys(given).every((name) => known.includes(name))) return undefined;
  return misnamed(
    { ...(request.params as object), ...(given as object) },
    known,
    'field',
    fixedFieldsOf(contract.operationId),
  );
}
