import { z } from 'zod';
import type { Declaration, OperationDeclaration, ToolDeclaration } from '../operations/declare';
import { perform, requireCredential } from '../operations/declare';
import { performOnce } from '../operations/perform-once';
import { defineTool, idempotencyKeyArg, keyArg, Replayed, type Tool, toolName } from './tool';

/**
 * The MCP tool table, derived from the operation declarations: one tool per declared `tool`,
 * named after its operationId in snake_case, taking the contract's input (plus `privateKey` where
 * the operation takes a space key) and calling the same use case as the REST operation.
 */
export function mcpTools(declarations: readonly Declaration[]): Tool[] {
  const tools: Tool[] = [];
  for (const declaration of declarations) {
    if (declaration.kind === 'tool') tools.push(declaration.tool);
    else if (declaration.kind === 'operation') {
      if (declaration.tool) tools.push(toolOf(declaration.contract, declaration.tool, declaration));
    } else {
      for (const method of Object.values(declaration.methods)) {
        if (method?.tool && method.contract) tools.push(toolOf(method.contract, method.tool));
      }
    }
  }
  return tools;
}

function toolOf(
  contract: OperationDeclaration['contract'],
  tool: ToolDeclaration,
  operation?: OperationDeclaration,
): Tool {
  let input = tool.input ?? (contract.input as z.ZodObject);
  // safeExtend keeps the refinements a contract schema carries (image content rules).
  if (contract.security.includes('spaceKey')) input = input.safeExtend(keyArg);
  if (tool.userTokenArg)
    input = input.safeExtend({ userToken: z.string().optional().describe(tool.userTokenArg) });
  // The writes REST replays for an Idempotency-Key, with their own use case: the same, per call.
  const replayable = operation !== undefined && !tool.run && contract.replayable && contract.method !== 'GET';
  if (replayable) input = input.safeExtend(idempotencyKeyArg);
  return defineTool({
    name: toolName(contract.operationId),
    title: tool.title,
    description: tool.description,
    input,
    output: tool.output ?? contract.output,
    annotations: tool.annotations,
    requireCredential: (credentials) => requireCredential(contract, { ...credentials, bearer: undefined }),
    run: async (parsed, ctx) => {
      const {
        privateKey: _key,
        userToken,
        pollToken,
        idempotencyKey,
        ...args
      } = parsed as Record<string, unknown>;
      // The argument wins over the connection's X-User-Token header, as privateKey does; a
      // pollToken travels as REST's X-Poll-Token does, beside the input.
      const caller = {
        ...ctx,
        ...(typeof userToken === 'string' ? { userToken } : {}),
        ...(typeof pollToken === 'string' ? { pollToken } : {}),
      };
      if (tool.run) return tool.run(args as never, caller);
      if (!operation) throw new Error(`tool ${contract.operationId} has nothing to run`);
      const input = tool.toInput ? tool.toInput(args) : args;
      const guarded = replayable ? await ctx.guard?.(idempotencyKey as string | undefined, args) : undefined;
      if (guarded && 'replay' in guarded) return new Replayed(guarded.replay);
      const answer = guarded
        ? await performOnce(operation, () => input, caller, guarded)
        : await perform(operation, input, caller);
      return 'replay' in answer ? new Replayed(answer.replay) : answer.body;
    },
  });
}
