/**
 * What the client's methods are typed to return, checked by `tsc` (`pnpm typecheck`): a wrong
 * overload fails the type check here, before a caller meets it at run time.
 */
import type {
  AuthenticationError,
  BadRequestError,
  Convene,
  ConveneError,
  ErrorBody,
  ErrorCode,
  FollowOptions,
  JoinedSpaceClient,
  JoinOptions,
  KnownErrorCode,
  LockedArtifact,
  OutageHooks,
  PendingJoin,
  ReconnectInfo,
  ReconnectOptions,
  SpaceClient,
  StreamOptions,
  ValidationIssue,
} from '../src';

/** True when A and B are the same type (not merely assignable to each other). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Joined<T> = T extends PromiseLike<infer R> ? R : never;

declare const hub: Convene;
declare const link: string;
declare const options: JoinOptions;

// Waiting (the default), a join resolves with the space client only, which knows its participantId.
const waited = hub.join(link, { name: 'a' });
export const waitedClient: Equal<Joined<typeof waited>, JoinedSpaceClient> = true;
const waitedByKey = hub.join('space', 'key', { name: 'a', wait: true });
export const waitedByKeyClient: Equal<Joined<typeof waitedByKey>, JoinedSpaceClient> = true;
declare const joined: Joined<typeof waited>;
export const participantIdKnown: Equal<typeof joined.participantId, string> = true;

// `wait: false`, or a `wait` only known at run time, may resolve with a PendingJoin.
const notWaited = hub.join(link, { name: 'a', wait: false });
export const notWaitedEither: Equal<Joined<typeof notWaited>, JoinedSpaceClient | PendingJoin> = true;
const unknown = hub.join(link, options);
export const unknownEither: Equal<Joined<typeof unknown>, JoinedSpaceClient | PendingJoin> = true;
const unknownByKey = hub.join('space', 'key', options);
export const unknownByKeyEither: Equal<Joined<typeof unknownByKey>, JoinedSpaceClient | PendingJoin> = true;

// A pending join, once approved, knows its participant too.
declare const pending: PendingJoin;
export const approvedKnown: Equal<Joined<ReturnType<PendingJoin['wait']>>, JoinedSpaceClient> = true;
export const checkedKnown: Equal<Joined<ReturnType<typeof pending.check>>, JoinedSpaceClient | null> = true;

// A client made from a key alone cannot know whose key it is; told the participantId, it does.
const fromKey = hub.space('space', 'key');
export const fromKeyUnknown: Equal<typeof fromKey.participantId, string | undefined> = true;
export const fromKeyClient: Equal<typeof fromKey, SpaceClient> = true;
const told = hub.space('space', 'key', 'participant');
export const toldKnown: Equal<typeof told, JoinedSpaceClient> = true;
// Its saved identity (`toJSON()`, and the key kept apart) makes the same kind of client again.
const saved = { ...told.toJSON(), key: told.key };
export const savedKnown: Equal<typeof saved.participantId, string> = true;
const restored = hub.space(saved.spaceId, saved.key, saved.participantId);
export const restoredKnown: Equal<typeof restored, JoinedSpaceClient> = true;

// The REST inputs of calls the SDK takes its own options for are not exported: messages.list()
// takes `since`, where the query says `timestamp`, and the REST shape would compile there unread.
// @ts-expect-error not exported: ListOptions is the type of messages.list()
export type NoListParams = import('../src').ListMessagesParams;
// @ts-expect-error not exported: StreamOptions is the type of messages.stream()
export type NoStreamParams = import('../src').StreamMessagesParams;
// @ts-expect-error not exported: artifacts.diff() takes two version numbers
export type NoDiffParams = import('../src').DiffArtifactVersionsParams;
// @ts-expect-error not exported: inbox.ack() takes a seq
export type NoAckParams = import('../src').AckInboxParams;
// The inputs the methods do take are.
export type SendParams = import('../src').SendMessageParams;

// A 400's issues are typed as the server sends them, on the error and in its body.
export const issuesTyped: Equal<BadRequestError['issues'], ValidationIssue[] | undefined> = true;
export const issuePath: Equal<ValidationIssue['path'], Array<string | number>> = true;
export const bodyIssues: Equal<ErrorBody['issues'], ValidationIssue[] | undefined> = true;

// An error's code: the known ones by name (an editor completes them) or any later string, on the
// error (undefined when the answer had none) and in its body.
export const codeTyped: Equal<ConveneError['code'], ErrorCode | undefined> = true;
export const codeOnSubclass: Equal<AuthenticationError['code'], ErrorCode | undefined> = true;
export const codeOpen: Equal<ErrorCode, KnownErrorCode | (string & {})> = true;
export const bodyCode: Equal<ErrorBody['code'], ErrorCode | undefined> = true;
export const knownCode: KnownErrorCode = 'participant_removed';
// @ts-expect-error a misspelt known code is no KnownErrorCode
export const misspelt: KnownErrorCode = 'participant_kicked';

// The two long-lived loops give up on a lost server by the same options, and tell of it by the
// same hooks (a stream's onReconnect is told its lastEventId too), declared once for both.
type Options<T, K extends PropertyKey> = { [P in K & keyof T]: T[P] };
export const streamGivesUp: Equal<
  Options<StreamOptions, keyof ReconnectOptions>,
  Required<ReconnectOptions>
> = true;
export const followGivesUp: Equal<
  Options<FollowOptions, keyof ReconnectOptions>,
  Required<ReconnectOptions>
> = true;
export const streamHooks: Equal<
  Options<StreamOptions, keyof OutageHooks>,
  Required<OutageHooks<ReconnectInfo>>
> = true;
export const followHooks: Equal<Options<FollowOptions, keyof OutageHooks>, Required<OutageHooks>> = true;

// A withLock callback's document shows what the callback uses, nothing of how withLock keeps the
// lock alive (hooks one assignment could have replaced, stopping its heartbeat).
export const lockedArtifactMembers: Equal<
  keyof LockedArtifact,
  'id' | 'artifact' | 'content' | 'version' | 'lockExpiresAt' | 'signal' | 'toJSON' | 'write' | 'reload'
> = true;
