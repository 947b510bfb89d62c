import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Clock,
  ConflictError,
  IdempotencyMismatchError,
  type IdempotencyStore,
  type StoredResponse,
  ValidationError,
} from '@convene/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientOf } from './client';
import { RATE_LIMIT_HEADERS } from './rate-limit';
import { VERSION_HEADERS } from './versioning';

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Headers never stored: the policy sets them afresh on every answer (a replay gets the current
 * rate-limit count), and the transport ones describe one connection.
 */
const NOT_REPLAYED = new Set([
  ...RATE_LIMIT_HEADERS,
  ...VERSION_HEADERS,
  'idempotency-replayed',
  'content-length',
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
]);

export interface IdempotencyPolicyOptions {
  store: IdempotencyStore;
  clock: Clock;
  /** How long a finished record is replayed (24 h). */
  ttlSeconds: number;
  /** How long a claim holds if its node dies before completing it. */
  leaseSeconds: number;
  /** How long a duplicate waits for the first request before answering 409 (10 s). */
  waitMs: number;
  /**
   * `METHOD /path` of writes never replayed whatever credential comes with them (path templates
   * with `{param}` segments): the credential-minting calls, where a retry must mint afresh.
   */
  neverReplayed: readonly string[];
}

interface Claim {
  scope: string;
  /** What to store, once sent: a response to replay, or null for nothing (5xx, a stream). */
  response?: StoredResponse | null;
  /** Stored or released: nothing left to do. */
  settled: boolean;
  /** The client went away while the handler was still running. */
  orphaned?: boolean;
}

const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex');

/** The record a write is kept under: method, path, credential (its hash) and Idempotency-Key. */
export const idempotencyScope = (method: string, path: string, credentialHash: string, key: string): string =>
  sha256([method, path, credentialHash, key].join('\n'));

/** JSON with object keys sorted, so a retry that orders its fields differently is the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function splitUrl(url: string): { path: string; query: string } {
  const at = url.indexOf('?');
  const path = at === -1 ? url : url.slice(0, at);
  return { path: path.length > 1 ? path.replace(/\/+$/, '') : path, query: at === -1 ? '' : url.slice(at) };
}

function replayableHeaders(reply: FastifyReply): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value === undefined || NOT_REPLAYED.has(name.toLowerCase())) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return headers;
}

/**
 * Idempotency-Key on writes: `preHandler` claims the record or replays it, `onSend` captures the
 * response and `onResponse` stores it. Requests without the header cost nothing. Registered
 * after the error reshaping onSend hook, so the stored body is the final one; replays pass
 * through the same onRequest hooks as any request, so they carry fresh API-Version and
 * rate-limit headers.
 */
export function idempotencyHooks(options: IdempotencyPolicyOptions) {
  const { store, clock } = options;
  const neverReplayed = options.neverReplayed.map(
    (template) =>
      new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}$`),
  );
  const claims = new WeakMap<FastifyRequest, Claim>();

  const replay = (reply: FastifyReply, response: StoredResponse) =>
    reply
      .code(response.status)
      .headers(response.headers)
      .header('Idempotency-Replayed', 'true')
      .send(response.body === '' ? undefined : response.body);

  const preHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!WRITES.has(request.method)) return;
    const header = request.headers['idempotency-key'];
    if (header === undefined) return;
    const key = Array.isArray(header) ? header.join(', ') : header;
    if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH)
      throw new ValidationError(`Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`);

    const { path, query } = splitUrl(request.url);
    const route = `${request.method} ${path}`;
    if (neverReplayed.some((pattern) => pattern.test(route))) return;
    const { credential } = clientOf(request);
    // Anonymous writes are never replayed: there is no caller to scope the record to.
    if (credential === undefined) return;

    const scope = idempotencyScope(request.method, path, credential, key);
    const requestHash = sha256(`${query}\n${canonicalJson(request.body ?? null)}`);
    // Real time, not the injected clock: this bounds a wait, it is not a TTL.
    const deadline = Date.now() + options.waitMs;
    let pause = 10;
    for (;;) {
      const now = clock.now();
      const leaseUntil = new Date(now.getTime() + options.leaseSeconds * 1000);
      if (await store.claim({ scope, requestHash, now, leaseUntil })) {
        const claim: Claim = { scope, settled: false };
        claims.set(request, claim);
        reply.raw.once('close', () => {
          // A hijacked reply (a stream, MCP) runs neither onSend nor onResponse: settle it now (a
          // release: nothing was captured), as any reply already answered. A client gone while
          // the handler still runs: the handler's answer settles it (see onSend), never earlier,
          // or a retry would run beside it.
          if (reply.sent || claim.response !== undefined) void settle(request, claim);
          else claim.orphaned = true;
        });
        return;
      }
      const record = await store.get(scope, clock.now());
      if (record && record.requestHash !== requestHash) throw new IdempotencyMismatchError();
      if (record?.state === 'done') return replay(reply, record.response);
      // Still running (or released a moment ago): wait for it, on this node or another.
      if (Date.now() >= deadline)
        throw new ConflictError(
          'a request with this Idempotency-Key is still being processed; retry it later',
        );
      await sleep(pause);
      pause = Math.min(pause * 2, 200);
    }
  };

  // The response is captured as it is sent, synchronously: an onSend hook that awaited would let
  // Fastify send again (empty) for handlers that call reply.send() without returning the reply,
  // as the OpenAPI adapter does. It is stored once the response has gone out; a retry arriving
  // in between finds the claim still running and waits the few milliseconds for it.
  const onSend = (
    request: FastifyRequest,
    reply: FastifyReply,
    payload: unknown,
    done: (err: null, payload: unknown) => void,
  ) => {
    const claim = claims.get(request);
    if (claim && !claim.settled && claim.response === undefined) {
      const storable =
        payload === undefined || payload === null || typeof payload === 'string' || Buffer.isBuffer(payload);
      // A 5xx is never replayed (the retry runs again), nor is a streamed body we cannot keep.
      claim.response =
        reply.statusCode >= 500 || !storable
          ? null
          : {
              status: reply.statusCode,
              headers: replayableHeaders(reply),
              body: payload === undefined || payload === null ? '' : String(payload),
            };
      // Its client is gone: no onResponse may follow.
      if (claim.orphaned) void settle(request, claim);
    }
    done(null, payload);
  };

  const settle = async (request: FastifyRequest, claim: Claim) => {
    if (claim.settled) return;
    claim.settled = true;
    try {
      if (claim.response)
        await store.complete(
          claim.scope,
          claim.response,
          new Date(clock.now().getTime() + options.ttlSeconds * 1000),
        );
      else await store.release(claim.scope);
    } catch (err) {
      request.log.error({ err }, 'idempotency record not stored');
    }
  };

  const onResponse = async (request: FastifyRequest) => {
    const claim = claims.get(request);
    if (claim) await settle(request, claim);
  };

  return { preHandler, onSend, onResponse };
}
