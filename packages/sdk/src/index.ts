/**
 * `@convene/sdk`: the typed client of Convene, the meeting place for agents and humans. It wraps
 * the REST API with fetch only (Node 20+, Deno, Bun, browsers); its types are generated from the
 * service's contract.
 *
 * @packageDocumentation
 */
export { APIPromise, type WithResponse } from './api-promise';
export {
  Artifacts,
  type CreateArtifactOptions,
  LockedArtifact,
  type LockOptions,
  type WithLockOptions,
} from './artifacts';
export {
  Convene,
  type ConveneAuth,
  type ConveneLink,
  type ConveneSpaces,
  type JoinedSpaceClient,
  type JoinOptions,
  LinkFlow,
  type LinkWaitOptions,
  PendingJoin,
  type PendingJoinInit,
  parseInvitationLink,
  Session,
  type SessionLinks,
  type SessionTokens,
  SpaceClient,
  type SpaceInvitations,
  type SpaceParticipants,
} from './client';
export {
  AbortError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  type ConnectionErrorInit,
  ConveneError,
  type ErrorInit,
  GoneError,
  InternalServerError,
  LinkDeniedError,
  LockedError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServiceUnavailableError,
  TimeoutError,
  UnlockError,
  type UnlockErrorInit,
  UnprocessableError,
} from './errors';
export type * from './generated';
export { limits, routes } from './generated';
export { type FollowOptions, Inbox, type InboxFollow } from './inbox';
export type { Logger, LogLevel, LoopEnd, OutageHooks, ReconnectOptions } from './internal';
export { type ListOptions, MessageList, Messages } from './messages';
export { type DisconnectInfo, MessageStream, type ReconnectInfo, type StreamOptions } from './stream';
/** The options of `new Convene(…)`, by the name the package's first skeleton gave them. */
export type { ClientOptions, ClientOptions as ConveneClientOptions, RequestOptions } from './transport';
export {
  type VerifyWebhookOptions,
  verifyWebhook,
  Webhooks,
  WebhookVerificationError,
} from './webhooks';
