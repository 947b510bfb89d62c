import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

/** Who is asking, as far as the HTTP policies care. Only hashes: a credential is never kept. */
export interface Client {
  /** The rate-limit bucket: the credential's hash, else the remote address's. */
  id: string;
  /** SHA-256 of the credential presented, or undefined for an anonymous request. */
  credential: string | undefined;
}

const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex');

const first = (value: unknown): string | undefined => {
  const v = Array.isArray(value) ? value[0] : value;
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
};

/**
 * The credential a request presents, in the order the routes read them: a space key in
 * `X-Private-Key` or in the `key` query parameter (streams, agent cards), a user token, a
 * dashboard JWT as an Authorization bearer.
 */
export function credentialOf(request: FastifyRequest): string | undefined {
  const headers = request.headers;
  return (
    first(headers['x-private-key']) ??
    first((request.query as Record<string, unknown> | undefined)?.key) ??
    first(headers['x-user-token']) ??
    first(headers.authorization)?.match(/^Bearer\s+(\S+)/i)?.[1]
  );
}

/** The hash a credential is known by in rate-limit and idempotency scopes. */
export const hashCredential = (credential: string): string => sha256(`credential:${credential}`);

const clients = new WeakMap<FastifyRequest, Client>();

/**
 * The client of the rate limit and idempotency scopes: the credential presented, else the remote
 * address (`request.ip`, which honours X-Forwarded-For only under TRUST_PROXY). Computed once per
 * request.
 */
export function clientOf(request: FastifyRequest): Client {
  let client = clients.get(request);
  if (!client) {
    const credential = credentialOf(request);
    const credentialHash = credential === undefined ? undefined : hashCredential(credential);
    client = { id: credentialHash ?? sha256(`address:${request.ip}`), credential: credentialHash };
    clients.set(request, client);
  }
  return client;
}
