import type { Deps } from '@convene/core';
import type { FastifyRequest } from 'fastify';
import type { Caller } from '../caller';
import { clientOf } from '../http/client';

export function headerValue(req: FastifyRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The caller of a REST request: its credentials, from their headers, and its address's bucket. */
export function restCaller(deps: Deps, req: FastifyRequest): Caller {
  return { deps, ...restCredentials(req), client: clientOf(req).rateLimit.address };
}

/** A REST request's credentials, from their headers. */
export function restCredentials(req: FastifyRequest): Omit<Caller, 'deps'> {
  const authorization = headerValue(req, 'authorization');
  return {
    key: headerValue(req, 'x-private-key') || undefined,
    userToken: headerValue(req, 'x-user-token') || undefined,
    pollToken: headerValue(req, 'x-poll-token') || undefined,
    bearer: authorization?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim(),
  };
}
