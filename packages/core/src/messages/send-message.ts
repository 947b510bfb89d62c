import type { TSendMessageRequest, TSendMessageResult } from '@convene/contract';
import { authorize, roles, spaceKeyHash } from '../auth/authorize';
import type { CoreConfig, Deps } from '../deps';
import { ConflictError, ForbiddenError } from '../errors';
import { newId } from '../ids';
import type { IdempotencyGuard } from '../infra/idempotency-store';
import { contextFromJson } from '../spaces/views';
import { appendMessage } from './append-messages';

export interface SendMessageOptions {
  deps: Deps;
  spaceId: string;
  key: string | undefined;
  input: Pick<TSendMessageRequest, 'content' | 'type'>;
  /**
   * The request's Idempotency-Key record: written by the sending statement itself, in the same
   * commit as the message (see IdempotencyStore), so a retry after any crash either finds the
   * message and its record or neither. Same-node duplicates are kept out of one batch by the caller.
   */
  idempotency?: IdempotencyGuard | undefined;
}

/**
 * A duplicate of this send (same Idempotency-Key) committed first, on this node or another: its
 * record holds the answer to replay (IdempotencyStore.get). Callers with a guard turn this into
 * the replay; 409 is only the fallback of a caller that does not.
 */
export class IdempotencyRecordedError extends ConflictError {
  constructor() {
    super('a request with this Idempotency-Key has already been answered; retry it to get the answer');
  }
}

/** What the sending statement records for a guarded send: the answer, as its rows. */
interface SendOutcome {
  kind: 'sendMessage';
  messageId: string;
  participants: unknown;
  artifacts: unknown;
}

/**
 * The answer of a guarded send, rebuilt from the outcome its statement recorded (lock fields as
 * of `now`, like every context bundle); undefined for an outcome of another kind.
 */
export function sendMessageResultOf(
  config: CoreConfig,
  now: Date,
  outcome: unknown,
): TSendMessageResult | undefined {
  const recorded = outcome as Partial<SendOutcome> | null;
  if (recorded?.kind !== 'sendMessage' || typeof recorded.messageId !== 'string') return undefined;
  return {
    messageId: recorded.messageId,
    ...contextFromJson(config, now, { participants: recorded.participants, artifacts: recorded.artifacts }),
  };
}

/**
 * The owner or an active participant posts a message. The hot path is one statement, shared
 * with the messages other requests of this process send at the same moment (group commit,
 * ./append-messages.ts): it checks the key, numbers, stamps and inserts the message, NOTIFYs
 * the nodes that listen and reads the reply's context bundle. Only when it writes nothing does
 * the full authorization run, to say why.
 */
export async function sendMessage({
  deps,
  spaceId,
  key,
  input,
  idempotency,
}: SendMessageOptions): Promise<TSendMessageResult> {
  const { db, clock } = deps;
  const outgoing = {
    spaceId,
    keyHash: spaceKeyHash(spaceId, key),
    messageId: newId(),
    type: input.type,
    content: input.content,
    now: clock.now(),
    guard: idempotency,
  };
  for (let attempt = 0; ; attempt++) {
    const appended = await appendMessage(db, deps.events, outgoing);
    if (appended === 'recorded') throw new IdempotencyRecordedError();
    if (appended)
      return { messageId: outgoing.messageId, ...contextFromJson(deps.config, clock.now(), appended) };

    // Nothing written: find out why (404, 401, 409), or refuse a muted sender (403).
    const { caller } = await authorize(db, clock, {
      spaceId,
      key,
      allow: roles.member,
      whenClosed: 'conflict',
    });
    if (caller.participant?.status === 'muted')
      throw new ForbiddenError('muted participants cannot send messages');
    // The sender's status changed between the two reads (e.g. unmuted): try again.
    if (attempt >= 3) throw new ForbiddenError('the sender is not an active participant');
  }
}
