import { hash } from 'node:crypto';
import { isIPv4 } from 'node:net';
import type { Credential } from '@convene/contract';
import { hashSecret, type RateLimitClient } from '@convene/core';
import type { FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';
import { operationAt } from '../rest/route-table';

/** Who is asking, as far as the HTTP policies care. Only hashes: a credential is never kept. */
export interface Client {
  /**
   * The credential presented of those the route reads (credentialsReadBy), undefined for a
   * request anonymous to its route: a key sent to createSpace or login buys no bucket of its own.
   */
  presented: PresentedCredential | undefined;
  /** SHA-256 of that credential, or undefined. */
  credential: string | undefined;
  /** The rate limit's view: the address, and the credential to check before it counts. */
  rateLimit: RateLimitClient;
}

/** Where a credential was presented, which says how it is checked. */
export type CredentialKind = 'space-key' | 'user-token' | 'jwt';

export interface PresentedCredential {
  kind: CredentialKind;
  value: string;
}

/**
 * SHA-256 in hex, for the names of rate-limit buckets and idempotency scopes. One-shot
 * `crypto.hash`: half the cost of a `createHash` object (several per request).
 */
export const sha256 = (value: string): string => hash('sha256', value, 'hex');

const first = (value: unknown): string | undefined => {
  const v = Array.isArray(value) ? value[0] : value;
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
};

/** Where each credential of the contract travels, as CredentialKind names it. */
const KIND_OF: Record<Credential, CredentialKind> = {
  spaceKey: 'space-key',
  userToken: 'user-token',
  dashboardJwt: 'jwt',
};

/**
 * Route config: the credentials a route reads (its contract's security, or a raw route's own
 * `reads`), or `any` (/mcp, whose calls each read their own). See credentialsReadBy.
 */
export const readsConfig = (reads: readonly Credential[] | 'any') => ({ reads });

/**
 * The kinds of credential the request's route reads; undefined for any. From the route's config
 * (raw and direct routes, set when they are registered), else from the contract operation the
 * method and path name (the OpenAPI adapter's routes): a route no operation serves reads none.
 */
function credentialsReadBy(request: FastifyRequest): readonly CredentialKind[] | undefined {
  const reads = (request.routeOptions.config as { reads?: readonly Credential[] | 'any' } | undefined)?.reads;
  if (reads === 'any') return undefined;
  const credentials = reads ?? operationAt(request.method, request.url.split('?')[0]!)?.security ?? [];
  return credentials.map((credential) => KIND_OF[credential]);
}

/**
 * The credential a request presents, in the order the routes read them: a space key in
 * `X-Private-Key` or in the `key` query parameter (streams, agent cards; not with `query: false`,
 * as writes read it), a user token, a dashboard JWT as an Authorization bearer. With `kinds`, only
 * those: what the route reads (a space key sent to createSpace or login is nobody's business).
 */
export function presentedCredential(
  request: FastifyRequest,
  { query = true, kinds }: { query?: boolean; kinds?: readonly CredentialKind[] | undefined } = {},
): PresentedCredential | undefined {
  const headers = request.headers;
  const spaceKey = reads(kinds, 'space-key')
    ? (first(headers['x-private-key']) ??
      (query ? first((request.query as Record<string, unknown>)?.key) : undefined))
    : undefined;
  if (spaceKey !== undefined) return { kind: 'space-key', value: spaceKey };
  const userToken = reads(kinds, 'user-token') ? first(headers['x-user-token']) : undefined;
  if (userToken !== undefined) return { kind: 'user-token', value: userToken };
  const bearer = first(headers.authorization)?.match(/^Bearer\s+(\S+)/i)?.[1];
  if (bearer === undefined) return undefined;
  // A usr_ token sent as a bearer is still a user token (and never a session).
  const kind = bearer.startsWith('usr_') ? 'user-token' : 'jwt';
  return reads(kinds, kind) ? { kind, value: bearer } : undefined;
}

/** Whether a route reading `kinds` (undefined: any) reads a credential of `kind`. */
const reads = (kinds: readonly CredentialKind[] | undefined, kind: CredentialKind): boolean =>
  kinds === undefined || kinds.includes(kind);

export function credentialOf(request: FastifyRequest): string | undefined {
  return presentedCredential(request)?.value;
}

/** The hash a credential is known by in rate-limit and idempotency scopes. */
export const hashCredential = (credential: string): string => sha256(`credential:${credential}`);

/**
 * The network a remote address counts as: an IPv4 address alone (an IPv4-mapped IPv6 one as that
 * IPv4 address), an IPv6 one by its /64, which is one subscriber's usual allocation: each of its
 * 2^64 addresses a client of its own would buy anyone on IPv6 endless fresh windows and stream
 * slots. What is not an address is itself.
 */
export function clientNetwork(ip: string): string {
  // The everyday case without parsing (ipaddr.js takes a microsecond or more a request).
  if (isIPv4(ip)) return ip;
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  const parts = (address as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((part) => part.toString(16)).join(':')}::/64`;
}

/** Addresses' buckets as computed last (a hash per request saved); emptied when it is full. */
const addressBuckets = new Map<string, string>();
const ADDRESS_BUCKETS_KEPT = 10_000;

/** The bucket of a remote address (its network: clientNetwork). */
export function addressBucket(ip: string): string {
  let bucket = addressBuckets.get(ip);
  if (bucket === undefined) {
    bucket = sha256(`address:${clientNetwork(ip)}`);
    if (addressBuckets.size >= ADDRESS_BUCKETS_KEPT) addressBuckets.clear();
    addressBuckets.set(ip, bucket);
  }
  return bucket;
}

/** The bucket of a remote address in the pages' own budget (pages, their assets, avatars). */
export const pageBucket = (ip: string): string => sha256(`pages:${clientNetwork(ip)}`);

/**
 * Shapes a credential can have at all: 64 hex characters (owner and participant keys), `inv_` and
 * 32 base64url characters (invitation keys), `usr_` and 43 (user tokens), three base64url parts
 * (JWTs). Anything else is malformed: it is never looked up and counts against the address.
 */
const WELL_FORMED: Record<CredentialKind, RegExp> = {
  'space-key': /^(?:[0-9a-f]{64}|inv_[A-Za-z0-9_-]{32})$/,
  'user-token': /^usr_[A-Za-z0-9_-]{43}$/,
  jwt: /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/,
};

export const isWellFormed = ({ kind, value }: PresentedCredential): boolean => WELL_FORMED[kind].test(value);

/**
 * The rate limit's client for a credential presented from `address`: the credential, to be
 * looked up as keys and tokens are stored (core's hashSecret) before it counts, when it is well
 * formed and stored; else the address. JWTs are verified by the caller (rate-limit.ts).
 */
export function rateLimitClient(
  presented: PresentedCredential | undefined,
  address: string,
  /** hashCredential of the credential, where the caller has it already. */
  bucket?: string,
): RateLimitClient {
  if (!presented || !isWellFormed(presented) || presented.kind === 'jwt') return { address };
  return {
    address,
    credential: {
      kind: presented.kind,
      lookup: hashSecret(presented.value),
      bucket: bucket ?? hashCredential(presented.value),
    },
  };
}

const clients = new WeakMap<FastifyRequest, Client>();

/**
 * The client of the rate limit and of stream admission, computed once per request: the
 * credential presented of those its route reads, counted as the client only once it is known to
 * work (see rate-limit.ts), else the remote address (`request.ip`, which honours X-Forwarded-For
 * only under TRUST_PROXY). A route that reads no credential (createSpace, login, signup, the link
 * flow, /ask, the documents) counts every request against the address, whatever it carries:
 * otherwise each owner key createSpace mints would buy the next call a fresh window.
 */
export function clientOf(request: FastifyRequest): Client {
  let client = clients.get(request);
  if (!client) {
    const presented = presentedCredential(request, { kinds: credentialsReadBy(request) });
    const address = addressBucket(request.ip);
    const bucket = presented === undefined ? undefined : hashCredential(presented.value);
    client = { presented, credential: bucket, rateLimit: rateLimitClient(presented, address, bucket) };
    clients.set(request, client);
  }
  return client;
}

/**
 * Admits an event stream (the event stream, an A2A stream, an MCP session's) among the open
 * streams of the request's client (EventHub.admit: 20 per credential, 200 per address, across
 * every node): its credential, or `orElse` for a stream whose route reads none (an MCP session's).
 * Resolves with what releases the slot when the stream ends.
 */
export function admitStream(
  hub: { admit(credential: string, address: string): Promise<() => void> },
  request: FastifyRequest,
  orElse?: string,
): Promise<() => void> {
  const client = clientOf(request);
  // Streams are opened with a working key, or by an MCP session: one of the two is there.
  return hub.admit((client.credential ?? orElse)!, client.rateLimit.address);
}

/** admitStream for a credential the request carries in its body (an MCP tool's `privateKey`). */
export function admitStreamOf(
  hub: { admit(credential: string, address: string): Promise<() => void> },
  request: FastifyRequest,
  credential: string,
): Promise<() => void> {
  return hub.admit(hashCredential(credential), clientOf(request).rateLimit.address);
}

/**
 * Whom a write's idempotency record is kept for: the credential presented, and with an invitation
 * key, which every invitee shares, also the address and the user token the write came from. So a
 * retried join gets its own answer replayed (the specification's rule 2) and no other holder of
 * the invitation ever does (rule 3, and decisions.md: a replay never hands a joiner's key to
 * another caller), even one that reuses the same Idempotency-Key.
 */
export function idempotencyCallerOf(request: FastifyRequest): string | undefined {
  // The credential the write reads: a space key in the query is not one (a write with it alone is
  // refused 401, and that refusal must not be what the same Idempotency-Key replays to the header).
  const presented = presentedCredential(request, { query: false });
  if (presented === undefined) return undefined;
  return idempotencyCaller(presented.value, request.ip, first(request.headers['x-user-token']));
}

/** idempotencyCallerOf of a credential however it came (an MCP tool's `privateKey` argument). */
export function idempotencyCaller(credential: string, ip: string, userToken: string | undefined): string {
  const hashed = hashCredential(credential);
  if (!credential.startsWith('inv_')) return hashed;
  return sha256(
    // The exact address, not its network: a replay goes to the one host that sent the write.
    [hashed, sha256(`address:${ip}`), userToken === undefined ? '' : hashCredential(userToken)].join('\n'),
  );
}
