import type { FastifyRequest } from 'fastify';

const SECRET_HEADERS = ['x-private-key', 'x-user-token', 'x-poll-token', 'authorization', 'cookie'];

/**
 * The query parameters logged as sent, by their name as the query parser reads it (decoded): the
 * API's own that never carry a secret or a person's words (positions, bounds, waits). Every other
 * one, the API's `key`, `next` (a path that may hold an invitation's key) and `query` (someone's
 * question) among them, and any a client invents (`?privateKey=`, `?access_token=`), has its value
 * replaced. The match is exact: `After`, `after ` or `after+` is a name of the client's own, which
 * the API does not read and which may hold anything (trimmed and lower-cased, they kept their values).
 */
const LOGGED_PARAMS = new Set(['after', 'before', 'from', 'to', 'since', 'limit', 'timestamp', 'wait']);

/** The path of `GET /hub/me/link/{userCode}`: its last segment is the code. */
const LINK_CODE_PATH = /^(\/hub\/me\/link\/)(?!approve$|deny$)[^/]+$/i;

/**
 * What has the shape of a credential of the service: a space key (64 hex digits), a user token
 * (`usr_`), an invitation key (`inv_`), a poll token (`poll_`), a webhook secret (`whsec_`) or a
 * JWT. A client that puts one where nothing secret belongs (the path, a Request-Id) still never
 * finds it in the log. Looser on purpose than the shapes client.ts looks up (`isWellFormed`): a
 * key cut short, padded or in capitals is redacted all the same.
 */
export const looksLikeCredential = (text: string): boolean =>
  /^[0-9a-f]{64}$/i.test(text) || /^(usr|inv|poll|whsec)_/i.test(text) || /^eyJ[\w-]*\.[\w-]*\./.test(text);

/**
 * A query parameter's name as the query parser reads it (`%61fter` and `%61ft%65r` are `after`, `+`
 * a space); one that does not decode is kept as written, as the parser keeps it.
 */
function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll('+', ' '));
  } catch {
    return name;
  }
}

/**
 * The scheme and authority of a request target in absolute form (`GET http://host/path`, which
 * Node and Fastify accept and route as `/path`): a client or proxy may send it with a user name
 * and password (`http://user:password@host/`).
 */
export const ABSOLUTE_FORM = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)/i;

/**
 * Request log lines never carry a key: the value of every query parameter but the few known to
 * hold none is replaced, however its name was encoded; a target in absolute form loses its user
 * name and password, and its path and query are redacted as any other's.
 */
export function redactUrl(url: string): string {
  const absolute = ABSOLUTE_FORM.exec(url);
  if (!absolute) return redactPathAndQuery(url);
  const [origin = '', scheme = '', authority = ''] = absolute;
  const at = authority.lastIndexOf('@');
  const host = at === -1 ? authority : `[redacted]@${authority.slice(at + 1)}`;
  return `${scheme}${host}${redactPathAndQuery(url.slice(origin.length))}`;
}

/** A request target's path and query (origin form), redacted. */
function redactPathAndQuery(url: string): string {
  // A link request's user code is a secret in transit (whoever has it can approve the link from
  // their own dashboard), in the path of the approval page's read as in `/link?code=`.
  const mark = url.indexOf('?');
  const path = mark === -1 ? url : url.slice(0, mark);
  const linkCode = LINK_CODE_PATH.exec(path);
  if (linkCode) url = `${linkCode[1]}[redacted]${url.slice(path.length)}`;
  else {
    // A key pasted in place of an id (`/hub/space/<key>`).
    const segments = path.split('/');
    if (segments.some(looksLikeCredential))
      url = `${segments.map((segment) => (looksLikeCredential(segment) ? '[redacted]' : segment)).join('/')}${url.slice(path.length)}`;
  }
  const at = url.indexOf('?');
  if (at === -1) return url;
  const hash = url.indexOf('#', at);
  const query = url.slice(at + 1, hash === -1 ? undefined : hash);
  const redacted = query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq === -1 ? pair : pair.slice(0, eq);
      if (LOGGED_PARAMS.has(decodedName(name))) return pair;
      // A bare name (`?<something>`) may itself be the secret.
      return eq === -1 ? '[redacted]' : `${name}=[redacted]`;
    })
    .join('&');
  return `${url.slice(0, at + 1)}${redacted}`;
}

export function redactedRequestSerializer(request: FastifyRequest) {
  return {
    method: request.method,
    // As the client sent it (before originForm), without its secrets.
    url: redactUrl(request.originalUrl),
    remoteAddress: request.ip,
    ...(SECRET_HEADERS.some((h) => request.headers[h] !== undefined) ? { credentials: '[redacted]' } : {}),
  };
}
