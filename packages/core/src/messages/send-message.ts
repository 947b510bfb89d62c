import { limits, type TSendMessageRequest, type TSendMessageResult } from '@convene/contract';
import { authorize, roles, spaceKeyHash, whenClosedOf } from '../auth/authorize';
import type { CoreConfig, Deps, WriteDeadline } from '../deps';
import {
  ConflictError,
  ForbiddenError,
  RateLimitedError,
  UnavailableError,
  ValidationError,
} from '../errors';
import { newId } from '../ids';
import type { IdempotencyGuard } from '../infra/idempotency-store';
import { type PendingCount, retryAfterSeconds } from '../infra/rate-limiter';
import { participantsForReply } from '../spaces/context-cache';
import { artifactsFromJson, contextFromJson } from '../spaces/views';
import { type Appended, appendMessage } from './append-messages';
import { uuidArray } from './views';

export interface SendMessageOptions {
  deps: Deps;
  spaceId: string;
  key: string | undefined;
  input: Pick<TSendMessageRequest, 'content' | 'type' | 'mentions' | 'replyTo'>;
  /**
   * The request's Idempotency-Key record: written by the sending statement itself, in the same
   * commit as the message (see IdempotencyStore), so a retry after any crash either finds the
   * message and its record or neither. Same-node duplicates are kept out of one batch by the caller.
   */
  idempotency?: IdempotencyGuard | undefined;
  /**
   * The request's count against the rate limit, left to the sending statement (one round trip
   * fewer): a request over the limit writes nothing and is refused with 429.
   */
  rateLimit?: PendingCount | undefined;
  /** The request's deadline (REST's 30 s), which the sending statement keeps (WriteDeadline). */
  deadline?: WriteDeadline | undefined;
}

/**
 * A duplicate of this send (same Idempotency-Key) committed first, on this node or another: its
 * record holds the answer to replay (IdempotencyStore.get). Callers with a guard turn this into
 * the replay; 409 is only the fallback of a caller that does not.
 */
export class IdempotencyRecordedError extends ConflictError {
  constructor() {
    super(
      'a request with this Idempotency-Key has already been answered; retry it to get the answer',
      {},
      'duplicate_request',
    );
  }
}

/** What the sending statement records for a guarded send: the answer, as its rows. */
interface SendOutcome {
  kind: 'sendMessage';
  messageId: string;
  mentions: unknown;
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
    mentions: uuidArray(recorded.mentions as string[] | string | null | undefined),
    ...contextFromJson(config, now, { participants: recorded.participants, artifacts: recorded.artifacts }),
  };
}

/**
 * The owner or an active participant posts a message. The hot path is one statement, shared
 * with the messages other requests of this process send at the same moment (group commit,
 * ./append-messages.ts): it checks the key, the mentions, the reply and the sender's budget,
 * numbers, stamps and inserts the message, files it in the inboxes it concerns, NOTIFYs the
 * nodes that listen and reads the reply's context bundle (and counts the request against the
 * rate limit, when that is left to it). Only when it writes nothing does the full authorization
 * run, to say why.
 */
export async function sendMessage({
  deps,
  spaceId,
  key,
  input,
  idempotency,
  rateLimit,
  deadline,
}: SendMessageOptions): Promise<TSendMessageResult> {
  const { db, clock } = deps;
  const outgoing = {
    spaceId,
    keyHash: spaceKeyHash(spaceId, key),
    messageId: newId(),
    type: input.type,
    content: input.content,
    mentions: input.mentions ?? [],
    replyTo: input.replyTo ?? null,
    names: input.type === 'text' ? nameFragments(input.content) : [],
    now: clock.now(),
    guard: idempotency,
    count: rateLimit,
    deadline,
  };
  for (let attempt = 0; ; attempt++) {
    const appended = await appendMessage(db, deps.events, deps.config, outgoing);
    const counted = rateLimit?.decision;
    if (counted && !counted.allowed) throw new RateLimitedError(retryAfterSeconds(counted, rateLimit.now));
    if (appended === 'recorded') throw new IdempotencyRecordedError();
    // Its client was answered 503 already, and the message was never sent.
    if (appended === 'abandoned')
      throw new UnavailableError('the request timed out before its message went out');
    if (appended?.refused) throw refusal(appended, clock.now(), outgoing.mentions);
    if (appended)
      return {
        messageId: outgoing.messageId,
        mentions: uuidArray(appended.mentions),
        participants: participantsForReply(appended.participants),
        artifacts: artifactsFromJson(clock.now(), appended.artifacts),
        suggestedPollingIntervalMs: deps.config.suggestedPollingIntervalMs,
      };

    // Nothing written: find out why (404, 401, 409), or refuse a muted sender (403).
    const { caller } = await authorize(db, clock, {
      spaceId,
      key,
      allow: roles.member,
      whenClosed: whenClosedOf.sendMessage,
    });
    if (caller.participant?.status === 'muted')
      throw new ForbiddenError('muted participants cannot send messages', 'participant_muted');
    // The sender's status changed between the two reads (e.g. unmuted): try again.
    if (attempt >= 3) throw new ForbiddenError('the sender is not an active participant');
  }
}

/**
 * The error of a send the statement refused although its sender may send. A mention or a reply
 * refused names its field in `issues`, as a malformed one's 400 does, so that a client can tell
 * which of its mentions names nobody here (one who left, was kicked, or never was).
 */
function refusal(appended: Appended, now: Date, mentions: readonly string[]): Error {
  if (appended.refused === 'budget') {
    const end = new Date(appended.detail ?? now.toISOString()).getTime();
    const error = new RateLimitedError(Math.max(1, Math.ceil((end - now.getTime()) / 1000)));
    error.message = `this space allows each participant ${appended.budget} message${appended.budget === 1 ? '' : 's'} per minute`;
    return error;
  }
  if (appended.refused === 'reply') {
    const message = 'replyTo names no message of this space';
    return new ValidationError(message, { issues: [{ path: ['replyTo'], message }] });
  }
  // Someone waiting for approval, who left or was kicked is listed among the participants: not
  // "in this space" would read as a wrong id.
  const message = `${appended.detail} is not a current participant of this space (active or muted)`;
  const at = mentions.findIndex((id) => id.toLowerCase() === appended.detail?.toLowerCase());
  return new ValidationError(`mentions: ${message}`, {
    issues: [{ path: at < 0 ? ['mentions'] : ['mentions', at], message }],
  });
}

/** At most this many `@` are looked at in one message. */
const MAX_NAME_FRAGMENTS = 64;
/** An `@` that starts a word (not the one of an e-mail address). */
const AT_SIGN = /(?<![\p{L}\p{N}_])@/gu;

/**
 * The text after each `@` that starts a word, long enough to hold any participant name and the
 * character after it: the sending statement matches them against the names in the space. In
 * Unicode's composed form (NFC), in which names are kept (participantName): `@Zoë` decomposed
 * (NFD, as macOS may give it) names Zoë, not a Zoe followed by a combining mark. The message keeps
 * its text.
 */
export function nameFragments(content: string): string[] {
  const fragments: string[] = [];
  for (const match of content.matchAll(AT_SIGN)) {
    const start = match.index + 1;
    // Room for the decomposed form of a longest name (a base and marks for each character), cut
    // by characters (code points), as the statement counts them, not UTF-16 units.
    const composed = content.slice(start, start + 4 * (limits.nameMax + 1)).normalize('NFC');
    const fragment = Array.from(composed)
      .slice(0, limits.nameMax + 1)
      .join('');
    if (fragment) fragments.push(fragment);
    if (fragments.length >= MAX_NAME_FRAGMENTS) break;
  }
  return fragments;
}
