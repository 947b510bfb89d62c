import type { Deps } from '@convene/core';
import Fastify, { type FastifyInstance } from 'fastify';
import { fastifyTRPCOpenApiPlugin } from 'trpc-to-openapi';
import type { ServerConfig } from './env';
import { toHttpError } from './http/errors';
import { registerHttpPolicy } from './http/policy';
import { redactedRequestSerializer } from './http/redact';
import { appRouter } from './routers';
import { registerRawRoutes } from './routes';
import { type Context, createContextFactory } from './trpc';

export interface AppOptions {
  config: ServerConfig;
  deps: Deps;
  /** Pino logger options, or false to log nothing (tests). */
  logger?: boolean;
}

/** Builds the HTTP application: policy hooks, the raw route table, then the REST procedures. */
export async function buildApp({ config, deps, logger = true }: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: logger ? { level: config.logLevel, serializers: { req: redactedRequestSerializer } } : false,
    bodyLimit: 2 * 1024 * 1024,
    trustProxy: config.trustProxy,
    // Streams are long-lived; SIGTERM ends them explicitly.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
  });

  registerHttpPolicy(app, config.publicUrl);
  await registerRawRoutes(app, { config, deps });

  await app.register(fastifyTRPCOpenApiPlugin, {
    router: appRouter,
    createContext: createContextFactory(deps),
    responseMeta: ({ ctx, errors }: { ctx?: Context; errors: unknown[] }) => {
      if (errors.length > 0) {
        const { status, headers } = toHttpError(errors[0], config.publicUrl);
        return { status, headers };
      }
      return { status: ctx?.resMeta.status ?? 200, headers: ctx?.resMeta.headers ?? {} };
    },
    onError: ({ error }: { error: { cause?: unknown } }) => {
      if (toHttpError(error, config.publicUrl).status >= 500)
        app.log.error({ err: error.cause ?? error }, 'procedure failed');
    },
  } as never);

  return app;
}
