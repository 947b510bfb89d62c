import type { RouteHandlerMethod } from 'fastify';
import { MEDIA, sendRaw } from '../http/reply';
import type { RouteScope } from './scope';

/**
 * The public keys of dashboard JWTs (`/.well-known/jwks.json`). The key pair is the deployment's,
 * kept in the database, so any node's document verifies any node's tokens.
 */
export function jwksHandler({ deps }: RouteScope): RouteHandlerMethod {
  const body = JSON.stringify(deps.sessions.jwks());
  return async (_request, reply) => sendRaw(reply, { type: MEDIA.jwks, body, cache: 'public' });
}
