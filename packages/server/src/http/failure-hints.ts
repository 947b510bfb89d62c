import type { HttpMethod } from '@convene/contract';
import type { FastifyRequest } from 'fastify';
import { headerValue } from '../rest/caller';
import { methodsAt } from '../rest/route-table';
import { type HttpError, NO_SUCH_ROUTE } from './errors';

/** What X-Private-Key takes, said after a credential of another kind was sent in it. */
const SPACE_KEYS =
  'X-Private-Key takes a key of this space: the owner key, a participant key or an invitation key';

/** Query parameters and body fields a space key is often put in by mistake. */
const QUERY_NAMES = ['key', 'privateKey', 'apiKey', 'token'];
const BODY_NAMES = ['privateKey', 'key', 'ownerPrivateKey', 'participantPrivateKey', 'publicInvitationKey'];

/**
 * A refusal told what went wrong where the request shows a usual mistake, its status and code
 * unchanged:
 * - a 401 for a missing or unknown space key: the key sent as `Authorization: Bearer`, in a query
 *   parameter the route does not read or in the body; a user token or dashboard JWT sent as
 *   X-Private-Key (where things went is named, never what they hold);
 * - a 404 for a path the API serves with other methods (the specification's statuses only, so not
 *   a 405): which methods it takes.
 */
export function withHints(request: FastifyRequest, failure: HttpError): HttpError {
  // tRPC's refusal of a path or method its procedures do not serve names them, as Fastify's does.
  if (failure.status === 404 && failure.body.error === NO_SUCH_ROUTE)
    failure = { ...failure, body: { ...failure.body, error: noRouteFor(request) } };
  const hint =
    failure.status === 401
      ? failure.body.code === 'key_required'
        ? misplacedKey(request)
        : failure.body.code === 'key_unknown'
          ? keyOfAnotherKind(headerValue(request, 'x-private-key'))
          : undefined
      : failure.status === 404 && failure.body.code === 'not_found'
        ? otherMethods(request)
        : undefined;
  return hint ? { ...failure, body: { ...failure.body, error: `${failure.body.error}: ${hint}` } } : failure;
}

/** What a 404 says of a method and path nothing serves. */
export const noRouteFor = (request: FastifyRequest): string =>
  `no route for ${request.method} ${request.url.split('?')[0]}`;

/** The methods the request's path is served with, when it is served but not with this one. */
function otherMethods(request: FastifyRequest): string | undefined {
  const listed = methodsAt(request.url.split('?')[0]!);
  // HEAD is served as the GET it mirrors.
  const asked = request.method === 'HEAD' ? 'GET' : request.method;
  if (listed.length === 0 || listed.includes(asked as HttpMethod)) return undefined;
  return `this path takes ${listed.length > 1 ? `${listed.slice(0, -1).join(', ')} or ${listed.at(-1)}` : listed[0]}, not ${request.method}`;
}

function misplacedKey(request: FastifyRequest): string | undefined {
  const send = 'send the space key in the X-Private-Key header';
  if (/^bearer\s/i.test(headerValue(request, 'authorization') ?? ''))
    return `${send}, not as Authorization: Bearer (which carries only the dashboard JWT, on /hub/me routes)`;
  const query = (request.query ?? {}) as Record<string, unknown>;
  const inQuery = QUERY_NAMES.find((name) => query[name] !== undefined);
  if (inQuery) return `${send}, not in the query parameter "${inQuery}"`;
  const body = request.body;
  const inBody =
    body && typeof body === 'object' && !Array.isArray(body)
      ? BODY_NAMES.find((name) => Object.hasOwn(body, name))
      : undefined;
  return inBody ? `${send}, not in the body field "${inBody}"` : undefined;
}

function keyOfAnotherKind(key: string | undefined): string | undefined {
  if (key?.startsWith('usr_'))
    return `this is a usr_ API token (identity only, sent as X-User-Token on createSpace and joinSpace); ${SPACE_KEYS}`;
  if (key && /^eyJ[\w-]*\.[\w-]+\.[\w-]*$/.test(key))
    return `this is a dashboard session JWT (sent as Authorization: Bearer, on /hub/me routes); ${SPACE_KEYS}`;
  return undefined;
}
