import type { Declaration, OperationDeclaration } from '../operations/declare';
import { perform, requireCredential } from '../operations/declare';
import { preparedProcedure, procedure, router } from '../trpc';

/**
 * The tRPC router of the declared operations, one procedure each, named by operationId. The
 * contract gives its method, path, input and output (trpc-to-openapi serves it at that path and
 * documents it); the declaration gives its use case and the status and headers of its answer.
 */
export function routerOf(declarations: readonly Declaration[]) {
  const procedures: Record<string, ReturnType<typeof procedureOf>> = {};
  for (const declaration of declarations) {
    if (declaration.kind === 'operation')
      procedures[declaration.contract.operationId] = procedureOf(declaration);
  }
  return router(procedures);
}

function procedureOf(declaration: OperationDeclaration) {
  const { contract } = declaration;
  const base = (declaration.prepare ? preparedProcedure(declaration) : procedure)
    .meta({
      openapi: {
        method: contract.method,
        path: contract.path as `/${string}`,
        operationId: contract.operationId,
        tags: [contract.tag],
        summary: contract.summary,
      },
      ownTransaction: declaration.ownTransaction,
    })
    // Before the input is parsed (tRPC parses it where `.input` stands in the chain).
    .use(({ ctx, next }) => {
      requireCredential(contract, ctx);
      return next();
    })
    .input(contract.input)
    .output(contract.output);
  return contract.method === 'GET'
    ? base.query(({ ctx, input }) => resolve(declaration, input, ctx))
    : base.mutation(({ ctx, input }) => resolve(declaration, input, ctx));
}

async function resolve(
  declaration: OperationDeclaration,
  input: unknown,
  ctx: Parameters<Parameters<typeof procedure.query>[0]>[0]['ctx'],
) {
  const { status, headers, body } = await perform(declaration, input, ctx);
  ctx.resMeta = { status, headers };
  return body;
}
