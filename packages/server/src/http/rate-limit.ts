import { type OperationContract, operations } from '@convene/contract';
import {
  type Clock,
  type PendingCount,
  type RateLimitClient,
  type RateLimitDecision,
  RateLimitedError,
  type RateLimiter,
  retryAfterSeconds,
} from '@convene/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { keyArgument, toolName } from '../mcp/tool';
import { clientOf, isWellFormed, type PresentedCredential, pageBucket, rateLimitClient } from './client';
import { toHttpError } from './errors';
import { hasTimedOut } from './timeout';

/** Response headers the rate limit sets on every answer (a replay recomputes them). */
export const RATE_LIMIT_HEADERS = [
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'ratelimit-policy',
];

export interface RateLimitPolicyOptions {
  limiter: RateLimiter;
  /**
   * The budget of the human side's static routes (PAGE_BUDGET: pages, /web/ assets, avatars), per
   * remote address and apart from the API's: a page view costs a dozen or more of them (its
   * scripts, its stylesheet, an avatar per participant), and people behind one office address
   * used up the API's 300 a minute by opening the space page. Without it they count as any route.
   */
  pageLimiter?: RateLimiter;
  clock: Clock;
  /** Whether a bearer JWT is a live dashboard session (checked in process: it is signed). */
  verifySession: (token: string, now: Date) => Promise<boolean>;
  /** The service's public URL, for the error answers it writes itself. */
  publicUrl: string;
}

/**
 * A route whose use case counts the request in its own statement (one round trip fewer on the
 * hottest write: see PendingCount), when the limiter's counters are the database's.
 */
export const COUNTED_BY_USE_CASE = { countedByUseCase: true };

/** The counts left to the use case, until they are settled. */
const pending = new WeakMap<FastifyRequest, PendingCount>();

/** The request's count, when the rate-limit hook left it to the use case (COUNTED_BY_USE_CASE). */
export const pendingCountOf = (request: FastifyRequest): PendingCount | undefined => pending.get(request);

/**
 * Counts the request against its client's window (one database round trip with a shared
 * store), sets `RateLimit-*` on the reply whatever happens next, and refuses the request with
 * 429 and `Retry-After` once the window is used up: nothing else runs then. The client is the
 * credential presented only once it is known to work (a live key or token, a valid session);
 * an unknown, malformed or revoked one counts against the remote address, so that inventing
 * credentials never buys a fresh window.
 */
export function rateLimitHook({
  limiter,
  pageLimiter,
  clock,
  verifySession,
  publicUrl,
}: RateLimitPolicyOptions) {
  const policyOf = ({ max, windowSeconds }: RateLimiter['options']) => `${max};w=${windowSeconds}`;
  const policy = policyOf(limiter.options);
  const pagePolicy = pageLimiter && policyOf(pageLimiter.options);

  const subjectOf = async (request: FastifyRequest, now: Date): Promise<RateLimitClient> => {
    const { rateLimit: client, presented, credential: bucket } = clientOf(request);
    if (presented?.kind !== 'jwt' || !isWellFormed(presented)) return client;
    if (bucket && (await verifySession(presented.value, now)))
      return { address: client.address, credential: { kind: 'verified', bucket } };
    return client;
  };

  const setHeaders = (reply: FastifyReply, now: Date, decision: RateLimitDecision, of = policy) => {
    const reset = retryAfterSeconds(decision, now);
    reply.headers({
      'RateLimit-Limit': String(decision.limit),
      'RateLimit-Remaining': String(decision.remaining),
      'RateLimit-Reset': String(reset),
      'RateLimit-Policy': of,
    });
    return reset;
  };

  /**
   * Windows read for health probes, by bucket, each taken for a second: however many probes come
   * from one address, its window is read about once a second (as checkDatabase reads the database).
   */
  const peeked = new Map<string, { at: number; read: Promise<RateLimitDecision> }>();
  const peek = (bucket: string, now: Date): Promise<RateLimitDecision> => {
    const t = performance.now();
    const last = peeked.get(bucket);
    if (last && t - last.at < PEEK_REUSE_MS) return last.read;
    if (peeked.size >= PEEKED_MAX) peeked.clear();
    const entry = { at: t, read: limiter.peek(bucket, now) };
    peeked.set(bucket, entry);
    entry.read.catch(() => {
      if (peeked.get(bucket) === entry) peeked.delete(bucket);
    });
    return entry.read;
  };

  async function rateLimit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const now = clock.now();
    if (isHealthProbe(request)) {
      // The health probe is no client's request: a balancer probing every node from one address
      // (or through the address other clients share) must never be refused for its number, or it
      // takes the whole service out, nor spend the window of the clients behind that address. It
      // reports the address's window as it stands (every API response carries the headers), and
      // without them when the database cannot say (the probe answers 503 then).
      try {
        setHeaders(reply, now, await peek(clientOf(request).rateLimit.address, now));
      } catch {}
      return;
    }
    if (pageLimiter && pagePolicy && isPageRoute(request)) {
      // No credential rides on these (an <img>, a stylesheet): the address is the client.
      const decision = await pageLimiter.consume(pageBucket(request.ip), now);
      const reset = setHeaders(reply, now, decision, pagePolicy);
      if (!decision.allowed) throw new RateLimitedError(reset);
      return;
    }
    const client = await subjectOf(request, now);
    if ((limiter.countsInStatements && countedByUseCase(request)) || countedByBody(request)) {
      // Left to the use case's statement, or to the MCP calls' own keys once the body is parsed
      // (chargeCalls); counted by `settlePending` if the request never gets there.
      let decision: RateLimitDecision | undefined;
      pending.set(request, {
        client,
        now,
        options: limiter.options,
        get decision() {
          return decision;
        },
        settle(counted) {
          decision = counted;
          setHeaders(reply, now, counted);
        },
      });
      return;
    }
    const decision = await limiter.consume(client, now);
    const reset = setHeaders(reply, now, decision);
    if (!decision.allowed) throw new RateLimitedError(reset);
  }

  /**
   * An onSend hook: a request whose count was left to its use case but which is answered without
   * it (a bad body, a replay, an error before the statement) is counted here, and over the limit
   * its answer becomes the 429 it would have had.
   */
  async function settlePending(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const count = pending.get(request);
    // The 503 of a request that took too long goes out now: counting it would wait on the
    // database that is (most often) what held it.
    if (!count || count.decision || hasTimedOut(request)) return payload;
    let refusal: unknown;
    try {
      const decision = await limiter.consume(count.client, count.now);
      count.settle(decision);
      if (decision.allowed) return payload;
      refusal = new RateLimitedError(retryAfterSeconds(decision, count.now));
    } catch (error) {
      // Not counted (the database is away): answered as the hook's own failure would be (503).
      if (reply.statusCode >= 500) return payload;
      refusal = error;
    }
    const refused = toHttpError(refusal, publicUrl);
    for (const name of ['location', 'idempotency-replayed', 'www-authenticate']) reply.removeHeader(name);
    reply
      .code(refused.status)
      .headers({ ...refused.headers, 'content-type': 'application/json; charset=utf-8' });
    return JSON.stringify(refused.body);
  }

  /**
   * Counts the JSON-RPC calls of an MCP request once its body is parsed: each against the
   * credential it reads (credentialOfCall), verified as a header key is, else against the
   * address. Agents that pass their key per call, as the README shows, are clients of their own,
   * as they would be with the header. 429 for the whole request once any of those windows is
   * used up.
   */
  async function chargeCalls(request: FastifyRequest, calls: unknown[]): Promise<void> {
    const count = pending.get(request);
    if (!count || count.decision) return;
    const { rateLimit, presented } = clientOf(request);
    const decisions = await Promise.all(
      calls.map((call) =>
        limiter.consume(rateLimitClient(credentialOfCall(call, presented), rateLimit.address), count.now),
      ),
    );
    const decision = tightest(decisions);
    count.settle(decision);
    if (decisions.some((d) => !d.allowed)) throw new RateLimitedError(retryAfterSeconds(decision, count.now));
  }

  return Object.assign(rateLimit, { chargeCalls, settlePending });
}

/** How long a health probe's reading of its address's window is reused, and for how many addresses. */
const PEEK_REUSE_MS = 1_000;
const PEEKED_MAX = 10_000;

/** The decision a response reports among several: a refusal, else the fewest requests left. */
const tightest = (decisions: RateLimitDecision[]): RateLimitDecision =>
  decisions.reduce((a, b) => (b.remaining < a.remaining || !b.allowed ? b : a));

/** An MCP POST: its calls are counted each by the credential it reads (credentialOfCall). */
const countedByBody = (request: FastifyRequest): boolean =>
  request.method === 'POST' && request.routeOptions.url === '/mcp';

/** The tools of the contract's operations that read no credential (create_space, ask…). */
const ANONYMOUS_TOOLS = new Set(
  (Object.values(operations) as OperationContract[])
    .filter((contract) => contract.security.length === 0)
    .map((contract) => toolName(contract.operationId)),
);

/**
 * The credential a JSON-RPC call of an MCP POST reads: none for a tool of an operation that reads
 * none (its calls count against the address, as on REST: a key in the header buys create_space
 * no window of its own); else the space key it carries (a tool's `privateKey` argument, a resource
 * method's param), else the connection's credential header.
 */
function credentialOfCall(
  call: unknown,
  header: PresentedCredential | undefined,
): PresentedCredential | undefined {
  const { method, params } = (call ?? {}) as {
    method?: unknown;
    params?: { name?: unknown; privateKey?: unknown; arguments?: { privateKey?: unknown } };
  };
  if (method === 'tools/call' && typeof params?.name === 'string' && ANONYMOUS_TOOLS.has(params.name))
    return undefined;
  const key = keyArgument(params?.arguments?.privateKey ?? params?.privateKey);
  return key === undefined ? header : { kind: 'space-key', value: key };
}

/**
 * Route config of the human side's static routes (pages, their files, avatars): counted in the
 * pages' budget when there is one (RateLimitPolicyOptions.pageLimiter), and carrying no credential.
 */
export const PAGE_BUDGET = { pageBudget: true };

/**
 * The paths of the operations no rate limit counts (`rateLimited: false`): the health probe's.
 * isHealthProbe matches a GET's path as it is, so such an operation must be a GET of a path
 * without parameters (the OpenAPI would otherwise promise no 429 where one is answered).
 */
const UNLIMITED_PATHS: ReadonlySet<string> = new Set(
  (Object.values(operations) as OperationContract[])
    .filter((contract) => contract.rateLimited === false)
    .map((contract) => {
      if (contract.method !== 'GET' || contract.path.includes('{'))
        throw new Error(`${contract.operationId}: rateLimited false is for a GET of a fixed path`);
      return contract.path;
    }),
);

/** `GET` (or `HEAD`) `/api/health`, whatever its query. */
export const isHealthProbe = (request: FastifyRequest): boolean =>
  (request.method === 'GET' || request.method === 'HEAD') &&
  UNLIMITED_PATHS.has(request.url.split('?', 1)[0] ?? '');

export const isPageRoute = (request: FastifyRequest): boolean =>
  (request.routeOptions.config as { pageBudget?: boolean } | undefined)?.pageBudget === true;

const countedByUseCase = (request: FastifyRequest): boolean =>
  (request.routeOptions.config as { countedByUseCase?: boolean } | undefined)?.countedByUseCase === true;

/**
 * MCP over HTTP carries several JSON-RPC calls in one batch: each counts as a request
 * (decisions.md), counted once the body is parsed, each against the credential it reads
 * (credentialOfCall). A POST the MCP route refuses as a whole (`refused`: a batch over its size, a
 * call that is no JSON-RPC) counts once, as any refused request: its calls are not looked up. A
 * batch of thousands of keyed calls, refused anyway, held the embedded database for seconds.
 */
export function mcpBatchHook(
  { chargeCalls }: ReturnType<typeof rateLimitHook>,
  refused: (request: FastifyRequest) => boolean,
) {
  return async (request: FastifyRequest): Promise<void> => {
    if (!countedByBody(request) || refused(request)) return;
    await chargeCalls(request, Array.isArray(request.body) ? request.body : [request.body]);
  };
}
