import type { TSendMessageRequest, TSendMessageResult } from '@convene/contract';
import { authorize, roles, spaceKeyHash } from '../auth/authorize';
import type { Deps } from '../deps';
import { ForbiddenError } from '../errors';
import { newId } from '../ids';
import { contextFromJson } from '../spaces/views';
import { appendMessage } from './append-messages';

export interface SendMessageOptions {
  deps: Deps;
  spaceId: string;
  key: string | undefined;
  input: Pick<TSendMessageRequest, 'content' | 'type'>;
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
}: SendMessageOptions): Promise<TSendMessageResult> {
  const { db, clock } = deps;
  const outgoing = {
    spaceId,
    keyHash: spaceKeyHash(spaceId, key),
    messageId: newId(),
    type: input.type,
    content: input.content,
    now: clock.now(),
  };
  for (let attempt = 0; ; attempt++) {
    const appended = await appendMessage(db, outgoing);
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
