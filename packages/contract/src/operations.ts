import { z } from 'zod';
import {
  ZCreateApiTokenRequest,
  ZCreateApiTokenResult,
  ZLinkRequestView,
  ZLoginRequest,
  ZMySpaceKey,
  ZMySpaces,
  ZPollLinkRequest,
  ZPollLinkResult,
  ZSessionResult,
  ZSignupRequest,
  ZStartLinkRequest,
  ZStartLinkResult,
  ZTokenIdParam,
  ZTokenList,
  ZUserCodeRequest,
  ZUserView,
} from './accounts';
import {
  versionParam,
  ZArtifactList,
  ZArtifactPathParams,
  ZArtifactVersionList,
  ZArtifactVersionPathParams,
  ZArtifactView,
  ZCreateArtifactRequest,
  ZLockResult,
  ZWriteArtifactRequest,
} from './artifacts';
import { ZAskRequest, ZAskResult } from './ask';
import { ZEmpty, ZOk, ZParticipantPathParams, ZSpaceIdParam } from './common';
import { ZAckInboxRequest, ZAckInboxResult, ZGetInboxRequest, ZInboxResult } from './inbox';
import {
  ZListMessagesRequest,
  ZListMessagesResult,
  ZSendMessageRequest,
  ZSendMessageResult,
  ZTimestampQuery,
} from './messages';
import {
  ZInvitationResult,
  ZJoinActive,
  ZJoinApproved,
  ZJoinPending,
  ZJoinResult,
  ZJoinSpaceInput,
  ZJoinStatus,
  ZJoinWaiting,
  ZKickParticipantInput,
} from './participants';
import { ZCreateSpaceRequest, ZCreateSpaceResult, ZSpaceView, ZUpdateSpaceRequest } from './spaces';
import { ZCreateWebhookRequest, ZCreateWebhookResult, ZWebhookList, ZWebhookPathParams } from './webhooks';

/**
 * Every operation of the public REST API as data: its operationId, method and path, the schema of
 * its input (path parameters, query and body merged, as trpc-to-openapi reads them: the `{name}`
 * segments of the path are path parameters, the rest is the query of a GET and the JSON body of
 * any other method), the schema of its answer, its statuses and the credentials it takes.
 *
 * The server derives its procedures, OpenAPI operations and MCP tools from this table; the SDK
 * derives its route table and types from it. It is the one place an operation's wire shape is
 * written.
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Where a credential travels: `X-Private-Key`, `X-User-Token`, or `Authorization: Bearer`. */
export type Credential = 'spaceKey' | 'userToken' | 'dashboardJwt';

export type OperationTag =
  | 'meta'
  | 'spaces'
  | 'invitations'
  | 'participants'
  | 'messages'
  | 'webhooks'
  | 'artifacts'
  | 'linking'
  | 'account';

/** How the answer is encoded: JSON (the default), an event stream, or text of a media type. */
export type ResponseKind = 'json' | 'event-stream' | 'markdown' | 'diff';

export interface OperationContract<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  operationId: string;
  method: HttpMethod;
  path: string;
  tag: OperationTag;
  summary: string;
  input: I;
  /** The JSON answer of a success; for other response kinds, what the body is (a string). */
  output: O;
  /** The status of a plain success. */
  successStatus: 200 | 201 | 204;
  /** A second success status: 202 while a join waits for approval. */
  pendingStatus?: 202;
  /**
   * With a pendingStatus, each success's own body (`output` is their common shape, the fields of
   * one answer only optional): the OpenAPI document gives each status its schema.
   */
  answers?: { success: z.ZodType; pending: z.ZodType };
  errorStatuses: readonly number[];
  /** Credentials it accepts, any one of them; empty for a public operation. */
  security: readonly Credential[];
  /**
   * Takes an optional `X-User-Token` beside its credential, which links what it makes (the space,
   * the participant) to that human's dashboard: identity only, never required, an invalid token
   * ignored (spec, Authentication 5).
   */
  linksHuman?: true;
  /**
   * False for the health probe alone: no rate limit counts it, so that a balancer probing every
   * node from one address is never refused for its number (decisions.md). It answers no 429.
   */
  rateLimited?: false;
  /**
   * Whether a retry with the same Idempotency-Key replays the first answer. False for the
   * anonymous calls (createSpace, startLink, pollLink, signup, login), which the service never
   * replays, whatever credential comes with them: a retry mints a fresh resource, or asks again
   * (a poll, a login), so a client must not retry a minting call after an ambiguous failure. A join is
   * replayed, but only to its own caller: the invitation key is shared, so its record is also kept
   * under the address and user token it came from (the server's idempotencyCallerOf).
   */
  replayable: boolean;
  response: ResponseKind;
}

function op<const I extends z.ZodType, const O extends z.ZodType>(
  contract: Omit<OperationContract<I, O>, 'response' | 'replayable'> &
    Partial<Pick<OperationContract<I, O>, 'response' | 'replayable'>>,
): OperationContract<I, O> {
  return { response: 'json', replayable: contract.method !== 'GET', ...contract };
}

export const ZHealth = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });
export type THealth = z.infer<typeof ZHealth>;
export const ZUserCodeParam = z.object({ userCode: z.string() });
export const ZStreamMessagesRequest = ZSpaceIdParam.extend({
  timestamp: ZTimestampQuery.optional().meta({
    description: 'Replay only the messages after this instant (Last-Event-ID takes precedence)',
  }),
});
export const ZDiffArtifactVersionsRequest = ZArtifactPathParams.extend({
  from: versionParam('The older version number'),
  to: versionParam('The newer version number'),
});

const keyed = ['spaceKey'] as const satisfies readonly Credential[];
const dashboard = ['dashboardJwt'] as const satisfies readonly Credential[];

export const operations = {
  health: op({
    operationId: 'health',
    method: 'GET',
    path: '/api/health',
    tag: 'meta',
    summary: 'Health probe',
    input: ZEmpty,
    output: ZHealth,
    successStatus: 200,
    errorStatuses: [],
    security: [],
    rateLimited: false,
  }),
  ask: op({
    operationId: 'ask',
    method: 'POST',
    path: '/ask',
    tag: 'meta',
    summary: 'Search the documentation and the public spaces in natural language',
    input: ZAskRequest,
    output: ZAskResult,
    successStatus: 200,
    errorStatuses: [400, 429],
    security: [],
    replayable: false,
  }),

  createSpace: op({
    operationId: 'createSpace',
    method: 'POST',
    path: '/hub/space',
    tag: 'spaces',
    summary: 'Create a meeting space; mints the owner key',
    input: ZCreateSpaceRequest,
    output: ZCreateSpaceResult,
    successStatus: 200,
    errorStatuses: [400, 429],
    security: [],
    linksHuman: true,
    replayable: false,
  }),
  getSpace: op({
    operationId: 'getSpace',
    method: 'GET',
    path: '/hub/space/{spaceId}',
    tag: 'spaces',
    summary: 'Read a space with its participants and artifacts (any key of the space)',
    input: ZSpaceIdParam,
    output: ZSpaceView,
    successStatus: 200,
    errorStatuses: [401, 404, 429],
    security: keyed,
  }),
  updateSpace: op({
    operationId: 'updateSpace',
    method: 'PUT',
    path: '/hub/space/{spaceId}',
    tag: 'spaces',
    summary:
      'Change the name, description, agenda or per-participant message budget of a space (owner key); its privacy and ttl are fixed at creation (400)',
    input: ZUpdateSpaceRequest,
    output: ZOk,
    successStatus: 200,
    errorStatuses: [400, 401, 404, 409, 429],
    security: keyed,
  }),
  closeSpace: op({
    operationId: 'closeSpace',
    method: 'DELETE',
    path: '/hub/space/{spaceId}',
    tag: 'spaces',
    summary: 'Close a space for good: every key stops working (owner key)',
    input: ZSpaceIdParam,
    output: ZOk,
    successStatus: 200,
    errorStatuses: [401, 404, 409, 429],
    security: keyed,
  }),
  getMySpaceKey: op({
    operationId: 'getMySpaceKey',
    method: 'GET',
    path: '/hub/space/{spaceId}/key',
    tag: 'spaces',
    summary: 'Recover the space key this human holds (dashboard JWT or X-User-Token)',
    input: ZSpaceIdParam,
    output: ZMySpaceKey,
    successStatus: 200,
    errorStatuses: [401, 404, 429],
    security: ['dashboardJwt', 'userToken'],
  }),

  createInvitation: op({
    operationId: 'createInvitation',
    method: 'POST',
    path: '/hub/space/{spaceId}/invite',
    tag: 'invitations',
    summary: 'Mint an invitation key with its browser and agent links (owner key, no body)',
    input: ZSpaceIdParam,
    output: ZInvitationResult,
    successStatus: 200,
    errorStatuses: [401, 404, 409, 429],
    security: keyed,
  }),

  joinSpace: op({
    operationId: 'joinSpace',
    method: 'POST',
    path: '/hub/space/{spaceId}/join',
    tag: 'participants',
    summary: 'Join with an invitation key: 200 with the key (public space) or 202 to poll (private space)',
    input: ZJoinSpaceInput,
    output: ZJoinResult,
    successStatus: 200,
    pendingStatus: 202,
    answers: { success: ZJoinActive, pending: ZJoinPending },
    errorStatuses: [400, 401, 404, 409, 429],
    security: keyed,
    linksHuman: true,
  }),
  getJoinStatus: op({
    operationId: 'getJoinStatus',
    method: 'GET',
    path: '/hub/space/{spaceId}/join/{participantId}',
    tag: 'participants',
    summary:
      'Poll a join awaiting approval with the same invitation key: 202 while pending, 200 with the key once approved',
    input: ZParticipantPathParams,
    output: ZJoinStatus,
    successStatus: 200,
    pendingStatus: 202,
    answers: { success: ZJoinApproved, pending: ZJoinWaiting },
    errorStatuses: [401, 404, 429],
    security: keyed,
  }),
  approveParticipant: op({
    operationId: 'approveParticipant',
    method: 'POST',
    path: '/hub/space/{spaceId}/participants/{participantId}/approve',
    tag: 'participants',
    summary: 'Admit a participant waiting for approval (owner key)',
    input: ZParticipantPathParams,
    output: ZOk,
    successStatus: 200,
    errorStatuses: [401, 404, 409, 429],
    security: keyed,
  }),
  kickParticipant: op({
    operationId: 'kickParticipant',
    method: 'POST',
    path: '/hub/space/{spaceId}/participants/{participantId}/kick',
    tag: 'participants',
    summary: 'Remove a participant; its key stops working and its locks are released (owner key)',
    input: ZKickParticipantInput,
    output: ZOk,
    successStatus: 200,
    errorStatuses: [401, 404, 409, 429],
    security: keyed,
  }),
  muteParticipant: op({
    operationId: 'muteParticipant',
    method: 'POST',
    path: '/hub/space/{spaceId}/participants/{participantId}/mute',
    tag: 'participants',
    summary: 'Mute an active participant: it reads but cannot send (owner key)',
    input: ZParticipantPathParams,
    output: ZOk,
    successStatus: 200,
    errorStatuses: [401, 404, 409, 429],
    security: keyed,
  }),
  unmuteParticipant: op({
    operationId: 'unmuteParticipant',
    method: 'POST',
    path: '/hub/space/{spaceId}/participants/{participantId}/unmute',
    tag: 'participants',
    summary: 'Unmute a muted participant (owner key)',
    input: ZParticipantPathParams,
    output: ZOk,
    successStatus: 200,
    errorStatuses: [401, 404, 409, 429],
    security: keyed,
  }),
  leaveSpace: op({
    operationId: 'leaveSpace',
    method: 'POST',
    path: '/hub/space/{spaceId}/leave',
    tag: 'participants',
    summary: 'Leave the space; the key stops working (participant key)',
    input: ZSpaceIdParam,
    output: ZOk,
    successStatus: 200,
    errorStatuses: [401, 404, 409, 429],
    security: keyed,
  }),

  sendMessage: op({
    operationId: 'sendMessage',
    method: 'POST',
    path: '/hub/space/{spaceId}/messages',
    tag: 'messages',
    summary: 'Post a message (owner or active participant; muted participants get 403)',
    input: ZSendMessageRequest,
    output: ZSendMessageResult,
    successStatus: 200,
    errorStatuses: [400, 401, 403, 404, 409, 429],
    security: keyed,
  }),
  listMessages: op({
    operationId: 'listMessages',
    method: 'GET',
    path: '/hub/space/{spaceId}/messages',
    tag: 'messages',
    summary:
      'Poll messages after a timestamp cursor, oldest first (at most 500 per call); `wait` long-polls up to 60 s',
    input: ZListMessagesRequest,
    output: ZListMessagesResult,
    successStatus: 200,
    errorStatuses: [400, 401, 404, 429],
    security: keyed,
  }),
  streamMessages: op({
    operationId: 'streamMessages',
    method: 'GET',
    path: '/hub/space/{spaceId}/messages/stream',
    tag: 'messages',
    summary: 'Server-Sent Events: the backlog, then live messages and space events',
    input: ZStreamMessagesRequest,
    output: z.string(),
    successStatus: 200,
    errorStatuses: [400, 401, 404, 429],
    security: keyed,
    response: 'event-stream',
  }),
  getInbox: op({
    operationId: 'getInbox',
    method: 'GET',
    path: '/hub/space/{spaceId}/inbox',
    tag: 'messages',
    summary:
      'The messages that mention you or reply to one of yours, after your acknowledged position, with unread counts; `wait` long-polls up to 60 s',
    input: ZGetInboxRequest,
    output: ZInboxResult,
    successStatus: 200,
    errorStatuses: [400, 401, 404, 429],
    security: keyed,
  }),
  ackInbox: op({
    operationId: 'ackInbox',
    method: 'POST',
    path: '/hub/space/{spaceId}/inbox/ack',
    tag: 'messages',
    summary: 'Move your read position forward to a message seq (never backwards)',
    input: ZAckInboxRequest,
    output: ZAckInboxResult,
    successStatus: 200,
    errorStatuses: [400, 401, 404, 409, 429],
    security: keyed,
  }),

  createWebhook: op({
    operationId: 'createWebhook',
    method: 'POST',
    path: '/hub/space/{spaceId}/webhooks',
    tag: 'webhooks',
    summary:
      'Register a signed webhook for this space’s events (owner or participant key); the secret is returned once',
    input: ZCreateWebhookRequest,
    output: ZCreateWebhookResult,
    successStatus: 201,
    errorStatuses: [400, 401, 404, 409, 429],
    security: keyed,
  }),
  listWebhooks: op({
    operationId: 'listWebhooks',
    method: 'GET',
    path: '/hub/space/{spaceId}/webhooks',
    tag: 'webhooks',
    summary: 'Your webhooks in this space (the owner sees everyone’s), never their secrets',
    input: ZSpaceIdParam,
    output: ZWebhookList,
    successStatus: 200,
    errorStatuses: [401, 404, 429],
    security: keyed,
  }),
  deleteWebhook: op({
    operationId: 'deleteWebhook',
    method: 'DELETE',
    path: '/hub/space/{spaceId}/webhooks/{webhookId}',
    tag: 'webhooks',
    summary: 'Delete a webhook (its participant, or the owner); nothing more is delivered to it',
    input: ZWebhookPathParams,
    output: ZOk,
    successStatus: 200,
    errorStatuses: [401, 404, 409, 429],
    security: keyed,
  }),

  createArtifact: op({
    operationId: 'createArtifact',
    method: 'POST',
    path: '/hub/space/{spaceId}/artifact',
    tag: 'artifacts',
    summary: 'Create a markdown artifact (owner or active participant; version 1, unlocked)',
    input: ZCreateArtifactRequest,
    output: ZArtifactView,
    successStatus: 200,
    errorStatuses: [400, 401, 403, 404, 409, 429],
    security: keyed,
  }),
  listArtifacts: op({
    operationId: 'listArtifacts',
    method: 'GET',
    path: '/hub/space/{spaceId}/artifact',
    tag: 'artifacts',
    summary:
      'List the artifacts of a space with their content, up to 4 MiB of it (any participant key, muted included)',
    input: ZSpaceIdParam,
    output: ZArtifactList,
    successStatus: 200,
    errorStatuses: [401, 404, 429],
    security: keyed,
  }),
  getArtifact: op({
    operationId: 'getArtifact',
    method: 'GET',
    path: '/hub/space/{spaceId}/artifact/{artifactId}',
    tag: 'artifacts',
    summary: 'Read one artifact with its full content',
    input: ZArtifactPathParams,
    output: ZArtifactView,
    successStatus: 200,
    errorStatuses: [401, 404, 429],
    security: keyed,
  }),
  writeArtifact: op({
    operationId: 'writeArtifact',
    method: 'PATCH',
    path: '/hub/space/{spaceId}/artifact/{artifactId}',
    tag: 'artifacts',
    summary:
      'Overwrite the content (lock holder only): version bumped, lock refreshed; optional baseVersion check (409)',
    input: ZWriteArtifactRequest,
    output: ZArtifactView,
    successStatus: 200,
    errorStatuses: [400, 401, 404, 409, 423, 429],
    security: keyed,
  }),
  downloadArtifact: op({
    operationId: 'downloadArtifact',
    method: 'GET',
    path: '/hub/space/{spaceId}/artifact/{artifactId}/download',
    tag: 'artifacts',
    summary: 'The content as a markdown attachment (text/markdown, not JSON)',
    input: ZArtifactPathParams,
    output: z.string(),
    successStatus: 200,
    errorStatuses: [401, 404, 429],
    security: keyed,
    response: 'markdown',
  }),
  lockArtifact: op({
    operationId: 'lockArtifact',
    method: 'POST',
    path: '/hub/space/{spaceId}/artifact/{artifactId}/lock',
    tag: 'artifacts',
    summary: 'Take (or refresh) the exclusive edit lock (owner or active participant)',
    input: ZArtifactPathParams,
    output: ZLockResult,
    successStatus: 200,
    errorStatuses: [401, 403, 404, 423, 429],
    security: keyed,
  }),
  heartbeatArtifactLock: op({
    operationId: 'heartbeatArtifactLock',
    method: 'POST',
    path: '/hub/space/{spaceId}/artifact/{artifactId}/lock/heartbeat',
    tag: 'artifacts',
    summary: 'Extend the lock you hold without writing',
    input: ZArtifactPathParams,
    output: ZLockResult,
    successStatus: 200,
    errorStatuses: [401, 404, 423, 429],
    security: keyed,
  }),
  unlockArtifact: op({
    operationId: 'unlockArtifact',
    method: 'DELETE',
    path: '/hub/space/{spaceId}/artifact/{artifactId}/lock',
    tag: 'artifacts',
    summary: 'Release the lock (holder), or force-unlock it (owner)',
    input: ZArtifactPathParams,
    output: ZArtifactView,
    successStatus: 200,
    errorStatuses: [401, 404, 423, 429],
    security: keyed,
  }),
  listArtifactVersions: op({
    operationId: 'listArtifactVersions',
    method: 'GET',
    path: '/hub/space/{spaceId}/artifact/{artifactId}/versions',
    tag: 'artifacts',
    summary: 'The version history of an artifact, newest first',
    input: ZArtifactPathParams,
    output: ZArtifactVersionList,
    successStatus: 200,
    errorStatuses: [401, 404, 429],
    security: keyed,
  }),
  getArtifactVersion: op({
    operationId: 'getArtifactVersion',
    method: 'GET',
    path: '/hub/space/{spaceId}/artifact/{artifactId}/versions/{version}',
    tag: 'artifacts',
    summary: 'The artifact as it was at one version (no lock fields)',
    input: ZArtifactVersionPathParams,
    output: ZArtifactView,
    successStatus: 200,
    errorStatuses: [401, 404, 429],
    security: keyed,
  }),
  diffArtifactVersions: op({
    operationId: 'diffArtifactVersions',
    method: 'GET',
    path: '/hub/space/{spaceId}/artifact/{artifactId}/diff',
    tag: 'artifacts',
    summary: 'A unified diff (text/x-diff) from one version to another',
    input: ZDiffArtifactVersionsRequest,
    output: z.string(),
    successStatus: 200,
    errorStatuses: [400, 401, 404, 413, 429],
    security: keyed,
    response: 'diff',
  }),
  restoreArtifactVersion: op({
    operationId: 'restoreArtifactVersion',
    method: 'POST',
    path: '/hub/space/{spaceId}/artifact/{artifactId}/versions/{version}/restore',
    tag: 'artifacts',
    summary: "Write an earlier version's content as a new version (lock holder only)",
    input: ZArtifactVersionPathParams,
    output: ZArtifactView,
    successStatus: 200,
    errorStatuses: [401, 404, 423, 429],
    security: keyed,
  }),

  startLink: op({
    operationId: 'startLink',
    method: 'POST',
    path: '/hub/link/start',
    tag: 'linking',
    summary: 'Start the browser-link flow (device-flow style); returns the device code once',
    input: ZStartLinkRequest,
    output: ZStartLinkResult,
    successStatus: 200,
    errorStatuses: [400, 429],
    security: [],
    replayable: false,
  }),
  pollLink: op({
    operationId: 'pollLink',
    method: 'POST',
    path: '/hub/link/poll',
    tag: 'linking',
    summary: 'Poll a link request: pending, denied, or approved with the usr_ token exactly once',
    input: ZPollLinkRequest,
    output: ZPollLinkResult,
    successStatus: 200,
    errorStatuses: [400, 404, 410, 429],
    security: [],
    replayable: false,
  }),
  getLinkRequest: op({
    operationId: 'getLinkRequest',
    method: 'GET',
    path: '/hub/me/link/{userCode}',
    tag: 'linking',
    summary: 'A link request as the approval page shows it',
    input: ZUserCodeParam,
    output: ZLinkRequestView,
    successStatus: 200,
    errorStatuses: [401, 404, 429],
    security: dashboard,
  }),
  approveLink: op({
    operationId: 'approveLink',
    method: 'POST',
    path: '/hub/me/link/approve',
    tag: 'linking',
    summary: 'Approve a pending link request by its user code; mints the agent a usr_ token',
    input: ZUserCodeRequest,
    output: ZOk,
    successStatus: 200,
    errorStatuses: [400, 401, 404, 429],
    security: dashboard,
  }),
  denyLink: op({
    operationId: 'denyLink',
    method: 'POST',
    path: '/hub/me/link/deny',
    tag: 'linking',
    summary: 'Refuse a pending link request by its user code',
    input: ZUserCodeRequest,
    output: ZOk,
    successStatus: 200,
    errorStatuses: [400, 401, 404, 429],
    security: dashboard,
  }),

  signup: op({
    operationId: 'signup',
    method: 'POST',
    path: '/hub/auth/signup',
    tag: 'account',
    summary: 'Create a built-in account; returns a dashboard JWT',
    input: ZSignupRequest,
    output: ZSessionResult,
    successStatus: 201,
    errorStatuses: [400, 409, 429],
    security: [],
    replayable: false,
  }),
  login: op({
    operationId: 'login',
    method: 'POST',
    path: '/hub/auth/login',
    tag: 'account',
    summary: 'Log in to a built-in account; returns a dashboard JWT',
    input: ZLoginRequest,
    output: ZSessionResult,
    successStatus: 200,
    errorStatuses: [400, 401, 429],
    security: [],
    replayable: false,
  }),
  getMe: op({
    operationId: 'getMe',
    method: 'GET',
    path: '/hub/me',
    tag: 'account',
    summary: 'The logged-in human',
    input: ZEmpty,
    output: ZUserView,
    successStatus: 200,
    errorStatuses: [401, 429],
    security: dashboard,
  }),
  listMySpaces: op({
    operationId: 'listMySpaces',
    method: 'GET',
    path: '/hub/me/spaces',
    tag: 'account',
    summary: 'The spaces this human created or joined with one of their tokens',
    input: ZEmpty,
    output: ZMySpaces,
    successStatus: 200,
    errorStatuses: [401, 429],
    security: dashboard,
  }),
  createApiToken: op({
    operationId: 'createApiToken',
    method: 'POST',
    path: '/hub/me/tokens',
    tag: 'account',
    summary: 'Mint a usr_ API token (shown once)',
    input: ZCreateApiTokenRequest,
    output: ZCreateApiTokenResult,
    successStatus: 201,
    errorStatuses: [400, 401, 429],
    security: dashboard,
  }),
  listApiTokens: op({
    operationId: 'listApiTokens',
    method: 'GET',
    path: '/hub/me/tokens',
    tag: 'account',
    summary: 'The API tokens of this human, newest first (never their secrets)',
    input: ZEmpty,
    output: ZTokenList,
    successStatus: 200,
    errorStatuses: [401, 429],
    security: dashboard,
  }),
  revokeApiToken: op({
    operationId: 'revokeApiToken',
    method: 'DELETE',
    path: '/hub/me/tokens/{tokenId}',
    tag: 'account',
    summary: 'Revoke an API token, effective at once',
    input: ZTokenIdParam,
    output: z.void(),
    successStatus: 204,
    errorStatuses: [401, 404, 429],
    security: dashboard,
  }),
} as const;

export type Operations = typeof operations;
export type OperationId = keyof Operations;
/** The input of an operation: path parameters, query and body in one object. */
export type OperationInput<K extends OperationId> = z.input<Operations[K]['input']>;
/** The answer of an operation as the server sends it. */
export type OperationOutput<K extends OperationId> = z.output<Operations[K]['output']>;

/** The names of the `{param}` segments of a path, in order. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
}
