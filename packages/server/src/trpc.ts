import type { Deps } from '@convene/core';
import { initTRPC } from '@trpc/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { toHttpError } from './http/errors';

/** Status and headers of a success other than a plain 200, set by the procedure. */
export interface ResponseMeta {
  status?: number;
  headers?: Record<string, string>;
}

export interface Context {
  deps: Deps;
  /** The X-Private-Key header: the space key. */
  key: string | undefined;
  /** The X-User-Token header: identity only. */
  userToken: string | undefined;
  /** The bearer token of the Authorization header: the dashboard JWT. */
  bearer: string | undefined;
  /** The remote address, for what is keyed by client. */
  ip: string;
  resMeta: ResponseMeta;
  req: FastifyRequest;
}

export type SecurityScheme = 'spaceKey' | 'userToken' | 'dashboardJwt';

export type Meta = OpenApiMeta<{
  /** The success status the OpenAPI document declares (the procedure sets it on ctx.resMeta). */
  successStatus?: 200 | 201 | 202 | 204;
  /** Credentials the operation accepts, any one of them; omitted for public operations. */
  security?: SecurityScheme[];
}>;

export const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    // trpc-to-openapi spreads this shape into its error body; the onSend hook keeps only `convene`.
    errorFormatter: ({ error, ctx }) => ({
      convene: toHttpError(error, ctx?.deps.config.publicUrl ?? '').body,
    }),
  });

export const router = t.router;
export const procedure = t.procedure;

export function headerValue(req: FastifyRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function createContextFactory(deps: Deps) {
  return ({ req }: { req: FastifyRequest; res: FastifyReply }): Context => {
    const authorization = headerValue(req, 'authorization');
    return {
      deps,
      key: headerValue(req, 'x-private-key') || undefined,
      userToken: headerValue(req, 'x-user-token') || undefined,
      bearer: authorization?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim(),
      ip: req.ip,
      resMeta: {},
      req,
    };
  };
}
