import { type HttpMethod, type OperationContract, operations } from '@convene/contract';
import type { FastifyRequest } from 'fastify';

/** The order methods are listed in. */
const METHOD_ORDER: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** A path template (`/hub/space/{spaceId}`) as the pattern of the paths it names, whole. */
export const pathPattern = (template: string): RegExp =>
  new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}$`);

/** Each path of the contract as a pattern, with the operation of each method it is served with. */
const PATHS: { pattern: RegExp; byMethod: Map<string, OperationContract> }[] = [];
for (const contract of Object.values(operations) as OperationContract[]) {
  const pattern = pathPattern(contract.path);
  let entry = PATHS.find((known) => known.pattern.source === pattern.source);
  if (!entry) {
    entry = { pattern, byMethod: new Map() };
    PATHS.push(entry);
  }
  entry.byMethod.set(contract.method, contract);
}

/** The contract operation a request's method and path (without its query) name, if any; HEAD as GET. */
export function operationAt(method: string, path: string): OperationContract | undefined {
  const asked = method === 'HEAD' ? 'GET' : method;
  for (const { pattern, byMethod } of PATHS) {
    const found = byMethod.get(asked);
    if (found && pattern.test(path)) return found;
  }
  return undefined;
}

/** The methods the contract serves a path (without its query) with, in the usual order. */
export function methodsAt(path: string): HttpMethod[] {
  const served = new Set<string>();
  for (const { pattern, byMethod } of PATHS)
    if (pattern.test(path)) for (const m of byMethod.keys()) served.add(m);
  return METHOD_ORDER.filter((method) => served.has(method));
}

/** The route trpc-to-openapi registers; every REST procedure not bound directly is served through it. */
export const OPENAPI_WILDCARD = '/*';

/** The operation found for each request on the OpenAPI adapter's route, once per request. */
const adapterOperations = new WeakMap<FastifyRequest, OperationContract | undefined>();

/**
 * The contract operation a request is routed to: a direct route's own (its config's `operation`),
 * else, on the OpenAPI adapter's route, the one its method and path name (looked up once, for the
 * hooks that each ask: the misnamed fields', the idempotency's, the policy's); none on other routes.
 */
export function operationOf(request: FastifyRequest): OperationContract | undefined {
  const config = request.routeOptions.config as { operation?: OperationContract } | undefined;
  if (config?.operation) return config.operation;
  if (request.routeOptions.url !== OPENAPI_WILDCARD) return undefined;
  if (adapterOperations.has(request)) return adapterOperations.get(request);
  const operation = operationAt(request.method, request.url.split('?')[0]!);
  adapterOperations.set(request, operation);
  return operation;
}

/** The value a path (without its query) gives a template's `{name}` segment, if it has one. */
export function pathParam(template: string, path: string, name: string): string | undefined {
  const at = template.split('/').indexOf(`{${name}}`);
  if (at === -1) return undefined;
  // Not decoded: a UUID has nothing to decode, and anything else names no space (404).
  return path.split('/')[at];
}
