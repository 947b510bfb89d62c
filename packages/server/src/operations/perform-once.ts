import { IdempotencyRecordedError, type StoredResponse } from '@convene/core';
import type { Caller } from '../caller';
import { type GuardedRequest, refusalOf } from '../http/idempotency';
import { type OperationDeclaration, perform, prepareFor } from './declare';

type Performed = Awaited<ReturnType<typeof perform>>;

/**
 * A write made with an Idempotency-Key (REST's header, an MCP tool's `idempotencyKey`), at most
 * once (http/idempotency.ts): in the transaction that records its answer, or, for a use case that
 * records it in its own statement, with the record's guard handed to it. The answer to replay
 * instead when a duplicate came first. `input` is read under the guard, so that a request refused
 * for it (400) is recorded as any refusal.
 */
export async function performOnce(
  declaration: OperationDeclaration,
  input: () => unknown,
  caller: Caller,
  guarded: GuardedRequest,
): Promise<Performed | { replay: StoredResponse }> {
  const publicUrl = caller.deps.config.publicUrl;
  // Before the record's transaction opens (a host lookup would hold it).
  if (declaration.prepare) caller = await prepareFor(declaration, input(), caller);
  if (!declaration.recordsIdempotency) {
    const outcome = await guarded.run(
      caller.deps.db,
      async (tx) => {
        const answer = await perform(declaration, input(), { ...caller, deps: { ...caller.deps, db: tx } });
        const body = declaration.contract.output.parse(answer.body);
        const response: StoredResponse = {
          status: answer.status,
          headers: { ...answer.headers, 'content-type': 'application/json; charset=utf-8' },
          body: body === undefined ? '' : JSON.stringify(body),
        };
        return { value: answer, response };
      },
      (error) => refusalOf(error, publicUrl),
    );
    return 'replay' in outcome ? outcome : outcome.value;
  }
  try {
    return await perform(declaration, input(), { ...caller, idempotency: guarded.guard });
  } catch (error) {
    if (error instanceof IdempotencyRecordedError) return { replay: await guarded.recorded() };
    const refused = refusalOf(error, publicUrl);
    // A duplicate answered first (before the mute or kick that refused this one committed).
    const first = refused && (await guarded.refused(refused));
    if (first) return { replay: first };
    throw error;
  } finally {
    guarded.release();
  }
}
