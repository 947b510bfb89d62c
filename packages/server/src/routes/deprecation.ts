import type { RouteHandlerMethod } from 'fastify';
import { MEDIA, sendRaw } from '../http/reply';
import { deprecationPolicyDocument } from '../http/versioning';
import type { RouteScope } from './scope';

/** `/.well-known/deprecation-policy`, from the same version table as the Deprecation and Sunset headers. */
export function deprecationPolicyHandler({ config, deps }: RouteScope): RouteHandlerMethod {
  return async (_request, reply) =>
    sendRaw(reply, {
      type: MEDIA.json,
      body: deprecationPolicyDocument(config.apiVersions, deps.clock.now(), config.publicUrl),
    });
}
