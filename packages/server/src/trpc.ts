import type { Deps } from '@convene/core';
import { initTRPC } from '@trpc/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { Caller } from './caller';
import { toHttpError } from './http/errors';
import { restCaller } from './rest/caller';

/** Status and headers of a success, set by the procedure from its contract (rest/procedures.ts). */
export interface ResponseMeta {
  status?: number;
  headers?: Record<string, string>;
}

export interface Context extends Caller {
  resMeta: ResponseMeta;
}

export const t = initTRPC
  .context<Context>()
  .meta<OpenApiMeta>()
  .create({
    // trpc-to-openapi spreads this shape into its error body; the onSend hook keeps only `convene`.
    errorFormatter: ({ error, ctx }) => ({
      convene: toHttpError(error, ctx?.deps.config.publicUrl ?? '').body,
    }),
  });

export const router = t.router;
export const procedure = t.procedure;

export function createContextFactory(deps: Deps) {
  return ({ req }: { req: FastifyRequest; res: FastifyReply }): Context => ({
    ...restCaller(deps, req),
    resMeta: {},
  });
}
