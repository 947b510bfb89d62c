import { beforeCommit, type Deps, type Executor, type StoredResponse } from '@convene/core';
import { initTRPC } from '@trpc/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { Caller } from './caller';
import { type GuardedRequest, guardOf, refusalOf } from './http/idempotency';
import { writeDeadline } from './http/timeout';
import { type OperationDeclaration, requireCredential } from './operations/declare';
import { restCaller } from './rest/caller';

/** Status and headers of a success, set by the procedure from its contract (rest/procedures.ts). */
export interface ResponseMeta {
  status?: number;
  headers?: Record<string, string>;
}

export interface Context extends Caller {
  resMeta: ResponseMeta;
  /** A write made with an Idempotency-Key (see the idempotent middleware below). */
  guarded: GuardedRequest | undefined;
}

/** A procedure's meta: its REST route, and what the middleware needs of its declaration. */
export interface Meta extends OpenApiMeta {
  /** See OperationDeclaration.ownTransaction. */
  ownTransaction?: boolean | undefined;
}

// Errors need no formatter: the adapter's error body is replaced by ours (rest/adapter.ts).
export const t = initTRPC.context<Context>().meta<Meta>().create();

export const router = t.router;

/** A stored answer given again through the adapter, marked as a replay. */
function replayed(ctx: Context, stored: StoredResponse) {
  ctx.resMeta = { status: stored.status, headers: { ...stored.headers, 'Idempotency-Replayed': 'true' } };
  // Returned ahead of the output check: a stored refusal is no output of the contract.
  return { ok: true as const, data: stored.body === '' ? undefined : JSON.parse(stored.body) };
}

/**
 * Writes made with an Idempotency-Key (http/idempotency.ts) record their answer in the
 * transaction of the write itself: the procedure runs with `ctx.deps.db` bound to it, so the
 * write, its record and its answer commit together, or not at all. A replay comes back through
 * the adapter with the stored status, headers and body.
 */
const idempotent = t.middleware(async ({ ctx, next, type, meta }) => {
  const { guarded } = ctx;
  if (!guarded) return type === 'mutation' && !meta?.ownTransaction ? withinDeadline(ctx, next) : next();
  const outcome = await guarded.run(
    ctx.deps.db,
    async (tx) => {
      const result = await nextIn(ctx, tx, next);
      const response: StoredResponse = {
        status: ctx.resMeta.status ?? 200,
        headers: { ...ctx.resMeta.headers, 'content-type': 'application/json' },
        body: result.data === undefined ? '' : JSON.stringify(result.data),
      };
      return { value: result, response };
    },
    (error) => refusalOf(error, ctx.deps.config.publicUrl),
  );
  if ('replay' in outcome) return replayed(ctx, outcome.replay) as never;
  return outcome.value;
});

/**
 * A write made without an Idempotency-Key (or anonymously, which none replays) runs in a
 * transaction of its own as well, so that one answered 503 for taking too long (http/timeout.ts)
 * commits nothing: its client was told it did not happen, and may well send it again. (Those
 * whose declaration says `ownTransaction` do not: see there.)
 */
async function withinDeadline<R extends { ok: boolean; error?: unknown }>(
  ctx: Context,
  next: () => Promise<R>,
): Promise<R> {
  return ctx.deps.db.transaction(async (tx) => {
    const result = await nextIn(ctx, tx, next);
    beforeCommit(ctx.deadline);
    return result;
  });
}

/**
 * The procedure run with `ctx.deps.db` bound to the write's transaction `tx`, in place, not
 * next({ ctx }): tRPC would hand the procedure a copy, and the status and headers it sets on
 * ctx.resMeta would be lost. A failure is thrown, so that what the write did is undone.
 */
async function nextIn<R extends { ok: boolean; error?: unknown }>(
  ctx: Context,
  tx: Executor,
  next: () => Promise<R>,
): Promise<Extract<R, { ok: true }>> {
  const deps = ctx.deps;
  ctx.deps = { ...deps, db: tx };
  let result: R;
  try {
    result = await next();
  } finally {
    ctx.deps = deps;
  }
  if (!result.ok) throw result.error;
  return result as Extract<R, { ok: true }>;
}

export const procedure = t.procedure.use(idempotent);

/**
 * The procedure of an operation with a `prepare` step (operations/declare.ts): that step runs
 * first, on the input as the procedure will parse it, before the idempotent middleware opens the
 * guarded write's transaction. An input the procedure refuses is left to it (400, recorded under
 * the guard as any refusal).
 */
export function preparedProcedure(declaration: OperationDeclaration) {
  return t.procedure
    .use(async ({ ctx, getRawInput, next }) => {
      // A missing credential is said as every operation says it, before any work.
      requireCredential(declaration.contract, ctx);
      const parsed = declaration.contract.input.safeParse(await getRawInput());
      if (parsed.success && declaration.prepare) ctx.prepared = await declaration.prepare(parsed.data, ctx);
      return next();
    })
    .use(idempotent);
}

export function createContextFactory(deps: Deps, shutdown: AbortSignal) {
  return ({ req, res }: { req: FastifyRequest; res: FastifyReply }): Context => ({
    ...restCaller(deps, req),
    ...(isLongPoll(req) ? { signal: requestSignal(res, shutdown) } : {}),
    deadline: writeDeadline(req),
    resMeta: {},
    guarded: guardOf(req),
  });
}

/** A GET with `wait`: it may wait for a minute, and must stop when its client or the server goes. */
const isLongPoll = (req: FastifyRequest): boolean =>
  req.method === 'GET' && typeof req.query === 'object' && req.query !== null && 'wait' in req.query;

/** Aborted when the response closes before it is finished (the client left) or the server shuts down. */
function requestSignal(res: FastifyReply, shutdown: AbortSignal): AbortSignal {
  const gone = new AbortController();
  res.raw.once('close', () => {
    if (!res.raw.writableFinished) gone.abort();
  });
  return AbortSignal.any([gone.signal, shutdown]);
}
