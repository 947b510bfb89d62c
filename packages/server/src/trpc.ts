import type { Deps } from '@convene/core';
import { initTRPC } from '@trpc/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { Caller } from './caller';
import { restCaller } from './rest/caller';

/** Status and headers of a success, set by the procedure from its contract (rest/procedures.ts). */
export interface ResponseMeta {
  status?: number;
  headers?: Record<string, string>;
}

export interface Context extends Caller {
  resMeta: ResponseMeta;
}

// Errors need no formatter: the adapter's error body is replaced by ours (rest/adapter.ts).
export const t = initTRPC.context<Context>().meta<OpenApiMeta>().create();

export const router = t.router;
export const procedure = t.procedure;

export function createContextFactory(deps: Deps) {
  return ({ req }: { req: FastifyRequest; res: FastifyReply }): Context => ({
    ...restCaller(deps, req),
    resMeta: {},
  });
}
