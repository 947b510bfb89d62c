import type { FastifyRequest } from 'fastify';

const SECRET_HEADERS = ['x-private-key', 'x-user-token', 'x-poll-token', 'authorization', 'cookie'];

/**
 * The query parameters logged as sent, by their decoded, lower-cased name: the API's own that
 * never carry a secret or a person's words (positions, bounds, waits). Every other one, the API's
 * `key`, `next` (a path that may hold an invitation's key) and `query` (someone's question) among
 * them, and any a client invents (`?privateKey=`, `?access_token=`), has its value replaced.
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

/** A query parameter's name as the query parser reads it (`%6Bey` and `k%65y` are `key`). */
function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll('+', ' ')).trim().toLowerCase();
  } catch {
    // Undecodable: compare what can be read of it.
    return name.toLowerCase();
  }
}

/**
 * Request log lines never carry a key: the value of every query parameter but the few known to
 * hold none is replaced, however its name was encoded.
 */
export function redactUrl(url: string): string {
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
    url: redactUrl(request.url),
    remoteAddress: request.ip,
    ...(SECRET_HEADERS.some((h) => request.headers[h] !== undefined) ? { credentials: '[redacted]' } : {}),
  };
}
