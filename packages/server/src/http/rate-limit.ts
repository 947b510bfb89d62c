import { type Clock, RateLimitedError, type RateLimiter } from '@convene/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientOf } from './client';

/** Response headers the rate limit sets on every answer (a replay recomputes them). */
export const RATE_LIMIT_HEADERS = [
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'ratelimit-policy',
];

export interface RateLimitPolicyOptions {
  limiter: RateLimiter;
  clock: Clock;
}

/**
 * Counts the request against its client's window (one database round trip with a shared
 * store), sets `RateLimit-*` on the reply whatever happens next, and refuses the request with
 * 429 and `Retry-After` once the window is used up: nothing else runs then.
 */
export function rateLimitHook({ limiter, clock }: RateLimitPolicyOptions) {
  const { max, windowSeconds } = limiter.options;
  const policy = `${max};w=${windowSeconds}`;
  return async function rateLimit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const now = clock.now();
    const decision = await limiter.consume(clientOf(request).id, now);
    const reset = Math.max(1, Math.ceil((decision.resetAt.getTime() - now.getTime()) / 1000));
    reply.headers({
      'RateLimit-Limit': String(decision.limit),
      'RateLimit-Remaining': String(decision.remaining),
      'RateLimit-Reset': String(reset),
      'RateLimit-Policy': policy,
    });
    if (!decision.allowed) throw new RateLimitedError(reset);
  };
}
