import { APIPromise, mapResult, type WithResponse } from './api-promise';
import { Artifacts } from './artifacts';
import { ConveneError, isTransient, LinkDeniedError } from './errors';
import type {
  AskRequest,
  AskResult,
  CreateApiTokenRequest,
  CreateApiTokenResult,
  CreateSpaceRequest,
  CreateSpaceResult,
  Health,
  InvitationResult,
  JoinSpaceParams,
  LinkRequest,
  ListApiTokensResult,
  LoginRequest,
  MySpaceKey,
  MySpaces,
  OkResult,
  OperationId,
  OperationTypes,
  PollLinkResult,
  SessionResult,
  SignupRequest,
  SpaceView,
  StartLinkRequest,
  StartLinkResult,
  UpdateSpaceParams,
  User,
} from './generated';
import { Inbox } from './inbox';
import {
  held,
  keep,
  type OutageHooks,
  outage,
  refuseMisplacedParams,
  setField,
  showAs,
  sleep,
  urlOf,
  uuid4,
} from './internal';
import { Messages } from './messages';
import { SpaceResource } from './space-resource';
import { type Call, type ClientOptions, type RequestOptions, Transport } from './transport';
import { Webhooks } from './webhooks';

// The groups of a client's operations are interfaces, not object types written inline: the
// declarations' bundler prints an inline type's members on one another's lines, and the editor
// then shows none of their docs but the first's.

/** `space.invitations` (owner key). */
export interface SpaceInvitations {
  /** Mints an invitation: `humanLink`, `agentLink` and `publicInvitationKey` (owner key). */
  create(options?: RequestOptions): APIPromise<InvitationResult>;
}

/** `space.participants`: moderation (owner key). */
export interface SpaceParticipants {
  /** Admits a participant waiting for approval. */
  approve(participantId: string, options?: RequestOptions): APIPromise<OkResult>;
  /**
   * Refuses a participant waiting for approval: its join fails with a NotFoundError (`join request
   * refused: …`); it may ask again. This is `kick` kept to those not yet admitted (`ifStatus:
   * 'waitingForApproval'`), which the server checks as it kicks: a participant who is active or
   * muted, even one approved a moment before by another process of the owner, stays, and the
   * answer is a ConflictError (409, `participant_status_conflict`, their `participantStatus`);
   * `kick` removes those. A server older than `ifStatus` ignores it and kicks whoever it is.
   */
  reject(participantId: string, options?: RequestOptions): APIPromise<OkResult>;
  /**
   * Removes a participant: its key stops working and its locks are released. Of a participant
   * waiting for approval, it refuses the request (as `reject`).
   */
  kick(participantId: string, options?: RequestOptions): APIPromise<OkResult>;
  /** Mutes an active participant: it can read but not send. */
  mute(participantId: string, options?: RequestOptions): APIPromise<OkResult>;
  /** Lets a muted participant send again. */
  unmute(participantId: string, options?: RequestOptions): APIPromise<OkResult>;
}

/** A client bound to one space and one key (owner or participant). */
export class SpaceClient extends SpaceResource {
  declare readonly spaceId: string;
  /**
   * Your participantId in the space, when this client knows it: the client `hub.join` returns
   * knows it, and `hub.space(spaceId, key, participantId)` is told it (for the owner, the
   * `ownerId` that `spaces.create` returns). Otherwise undefined: this property is not filled
   * in from the server; `(await client.get()).you.participantId` says whose the key is.
   */
  declare readonly participantId?: string | undefined;
  declare readonly messages: Messages;
  /** What concerns you (mentions, replies), with a read position the server keeps. */
  declare readonly inbox: Inbox;
  /** Signed webhooks that push the space's events to you. */
  declare readonly webhooks: Webhooks;
  declare readonly artifacts: Artifacts;
  /** Invitations to the space (owner key). */
  declare readonly invitations: SpaceInvitations;
  /** Moderation (owner key). */
  declare readonly participants: SpaceParticipants;

  /** @internal */
  constructor(transport: Transport, spaceId: string, key: string, participantId?: string) {
    super(transport, spaceId, key, participantId);
    const resource = [transport, spaceId, key, participantId] as const;
    this.messages = new Messages(...resource);
    this.inbox = new Inbox(...resource);
    this.webhooks = new Webhooks(...resource);
    this.artifacts = new Artifacts(...resource);
    this.invitations = {
      create: (options) => this.call('createInvitation', {}, undefined, options),
    };
    const moderate =
      (
        operationId: 'approveParticipant' | 'kickParticipant' | 'muteParticipant' | 'unmuteParticipant',
        params?: { ifStatus: 'waitingForApproval' },
      ) =>
      (participantId: string, options?: RequestOptions) =>
        this.call(operationId, { participantId }, params, options);
    this.participants = {
      approve: moderate('approveParticipant'),
      // The server checks the status under the participant's lock: a joiner approved meanwhile
      // (by another process of the owner) stays, where a read here then a kick would remove them.
      reject: moderate('kickParticipant', { ifStatus: 'waitingForApproval' }),
      kick: moderate('kickParticipant'),
      mute: moderate('muteParticipant'),
      unmute: moderate('unmuteParticipant'),
    };
    // console.log and util.inspect in Node show who each object is (its credentials are hidden anyway).
    showAs(SpaceClient, 'SpaceClient');
  }

  /** The owner or participant key this client sends (`X-Private-Key`). Keep it secret. */
  override get key(): string {
    return super.key;
  }

  /** The server this client talks to, as given, without a trailing slash. */
  get baseUrl(): string {
    return this.transport.options.baseUrl;
  }

  /** Who this client is, never its key: what `JSON.stringify` and `console.log` show. */
  override toJSON(): { baseUrl: string; spaceId: string; participantId: string | undefined } {
    return { ...this.transport.toJSON(), spaceId: this.spaceId, participantId: this.participantId };
  }

  /** The space with its participants and artifacts. */
  get(options?: RequestOptions): APIPromise<SpaceView> {
    return this.call('getSpace', {}, undefined, options);
  }

  /**
   * Changes the name, description or agenda, or sets `maxMessagesPerMinute`, the budget of each
   * participant's messages per minute (`null` removes it) (owner key).
   */
  update(params: UpdateSpaceParams, options?: RequestOptions): APIPromise<OkResult> {
    return this.call('updateSpace', {}, params, options);
  }

  /** Closes the space for good: every key stops working (owner key). */
  close(options?: RequestOptions): APIPromise<OkResult> {
    return this.call('closeSpace', {}, undefined, options);
  }

  /** Leaves the space; this key stops working (participant key). */
  leave(options?: RequestOptions): APIPromise<OkResult> {
    return this.call('leaveSpace', {}, undefined, options);
  }
}

/** A join's parameters, which a request option never is (see refuseMisplacedParams). */
const JOIN_PARAMS = ['wait', 'pollIntervalMs', 'onDisconnect', 'onReconnect', 'name', 'role', 'isHuman'];

export interface JoinOptions extends JoinSpaceParams, OutageHooks {
  /**
   * In a private space, wait for the owner's approval (polling) before resolving (default true);
   * only the request options' `signal` ends that wait (`timeoutMs` bounds each request, the join
   * and each poll). With `false` a pending join resolves at once with a PendingJoin. While it waits, `onDisconnect`
   * and `onReconnect` say when the server stops answering and when it answers again.
   */
  wait?: boolean | undefined;
  /** How often to poll while waiting for approval, in ms (default 2000). */
  pollIntervalMs?: number | undefined;
}

export interface PendingJoinInit {
  spaceId: string;
  invitationKey: string;
  participantId: string;
  /** The 202's `pollToken`, sent as `X-Poll-Token` (servers that hand out none do not need it). */
  pollToken?: string | undefined;
  /**
   * The 202's `statusUrl` (also its `Location`), for information: resuming does not need it (the
   * poll's address is made from the ids), so `toJSON` leaves it out.
   */
  statusUrl?: string | undefined;
}

/** The invitation key, poll token and transport of each PendingJoin, off its own properties (see keep). */
type PendingJoinHeld = {
  transport: Transport;
  invitationKey: string;
  pollToken: string | undefined;
};

/** A join waiting for the owner's approval. Keep its fields to resume it from another process. */
export class PendingJoin {
  readonly status = 'pending' as const;
  declare readonly spaceId: string;
  declare readonly participantId: string;
  /** Where the join's status is polled, as the server named it (undefined for a join resumed without it). */
  declare readonly statusUrl: string | undefined;
  /** The poll that handed out the key: the server hands a key out once, this object as often as asked. */
  declare private approved: WithResponse<JoinedSpaceClient> | undefined;

  /** @internal */
  constructor(transport: Transport, init: PendingJoinInit) {
    keep(this, { transport, invitationKey: init.invitationKey, pollToken: init.pollToken });
    this.spaceId = init.spaceId;
    this.participantId = init.participantId;
    this.statusUrl = init.statusUrl;
    // The invitation key and pollToken are in the JSON that resumes a join, never in a log.
    showAs(PendingJoin, 'PendingJoin', ({ status, spaceId, participantId }) => ({
      status,
      spaceId,
      participantId,
    }));
  }

  private get transport(): Transport {
    return held<PendingJoinHeld>(this).transport;
  }

  get invitationKey(): string {
    return held<PendingJoinHeld>(this).invitationKey;
  }

  get pollToken(): string | undefined {
    return held<PendingJoinHeld>(this).pollToken;
  }

  /**
   * Exactly what `hub.pendingJoin(…)` needs to resume it, in this or another process: `spaceId`,
   * `invitationKey`, `participantId` and `pollToken`. `JSON.stringify` gives it.
   */
  toJSON(): Omit<PendingJoinInit, 'statusUrl'> {
    const { spaceId, invitationKey, participantId, pollToken } = this;
    return { spaceId, invitationKey, participantId, pollToken };
  }

  /**
   * Polls once: the space client once approved, null while still waiting. This object gives the
   * same client again; another made from its JSON (`hub.pendingJoin(saved)`, a restarted process)
   * gets the same key from the server for 10 minutes after the first poll that returned it, and a
   * NotFoundError (code `join_key_collected`) after, so save the client's key as soon as you have it.
   */
  check(options?: RequestOptions): APIPromise<JoinedSpaceClient | null> {
    if (this.approved) return new APIPromise(Promise.resolve(this.approved));
    return mapResult(
      this.transport.call(
        'getJoinStatus',
        {
          path: { spaceId: this.spaceId, participantId: this.participantId },
          credentials: { spaceKey: this.invitationKey, pollToken: this.pollToken },
        },
        options,
      ),
      (result, response): JoinedSpaceClient | null => {
        if (response.status === 202 || result.status === 'pending') return null;
        if (!result.participantPrivateKey)
          throw new ConveneError('the join was approved, but its key was already handed out', {
            status: response.status,
            headers: response.headers,
          });
        const client = new SpaceClient(
          this.transport,
          this.spaceId,
          result.participantPrivateKey,
          this.participantId,
        ) as JoinedSpaceClient;
        this.approved = { data: client, response };
        return client;
      },
    );
  }

  /**
   * Polls until the owner approves; resolves with the space client. A poll that gets no answer or
   * a 5xx (a server restarting) is made again at the next interval, and told to `onDisconnect`
   * (then `onReconnect` once the server answers again). Only `options.signal` ends the wait
   * (`AbortSignal.timeout(ms)` to give up after a while): `timeoutMs` bounds each poll, and a poll
   * that times out is made again.
   */
  wait(
    options?: RequestOptions & OutageHooks & { pollIntervalMs?: number | undefined },
  ): APIPromise<JoinedSpaceClient> {
    const { pollIntervalMs = 2000, ...rest } = options ?? {};
    // An approval can take hours: a server restart on the way must not end the wait, which (in
    // hub.join) would lose the join and its pollToken with the error.
    return pollUntil(
      this.transport,
      rest,
      pollIntervalMs,
      `join ${this.participantId}`,
      () =>
        this.transport.aborted('getJoinStatus', { spaceId: this.spaceId, participantId: this.participantId }),
      (requestOptions) => this.check(requestOptions),
      (client) => client,
    );
  }
}

/**
 * Polls with `poll` every `intervalMs` until `settle` makes something of an answer: a poll that
 * gets no answer or a 5xx (a server restarting) is made again at the next interval, unless the
 * wait has `expired`, and told to `onDisconnect` (then `onReconnect` once the server answers
 * again). `what` names the polls in the log; `aborted`, what an AbortError of the pause between
 * two polls says: as a poll's own, the wait being between two of them.
 */
function pollUntil<A, T>(
  transport: Transport,
  { onDisconnect, onReconnect, ...requestOptions }: RequestOptions & OutageHooks,
  intervalMs: number,
  what: string,
  aborted: () => string,
  poll: (options: RequestOptions) => APIPromise<A>,
  settle: (answer: A) => T | null | undefined,
  expired?: () => boolean,
): APIPromise<T> {
  const contact = outage({ onDisconnect, onReconnect });
  const run = async (): Promise<WithResponse<T>> => {
    for (;;) {
      try {
        const { data, response } = await poll(requestOptions).withResponse();
        contact.answered();
        const settled = settle(data);
        if (settled != null) return { data: settled, response };
      } catch (error) {
        if (!isTransient(error) || expired?.()) throw error;
        transport.logger.info(`${what}: ${(error as Error).message}; polling again in ${intervalMs} ms`);
        contact.failed(error as ConveneError, intervalMs);
      }
      await sleep(intervalMs, requestOptions.signal, aborted());
    }
  };
  return new APIPromise(run());
}

/** The options of `link.wait()`: a call's request options, the outage hooks, and how often to poll. */
export interface LinkWaitOptions extends RequestOptions, OutageHooks {
  /** How often to poll, in ms (default: the server's `interval`, in seconds). */
  pollIntervalMs?: number | undefined;
  /** @deprecated Pass `pollIntervalMs`, as a join's and a PendingJoin's wait take it. */
  intervalMs?: number | undefined;
}

/** The device code and transport of each LinkFlow, off its own properties (see keep). */
type LinkFlowHeld = { transport: Transport; deviceCode: string };

/** A started browser-link flow: show `verificationUriComplete` to your human, then `wait()`. */
export class LinkFlow implements StartLinkResult {
  declare readonly verificationUri: string;
  declare readonly verificationUriComplete: string;
  declare readonly expiresIn: number;
  declare readonly interval: number;
  declare readonly userCode: string;
  private readonly startedAt = Date.now();

  /** @internal */
  constructor(transport: Transport, result: StartLinkResult) {
    keep(this, { transport, deviceCode: result.deviceCode });
    this.verificationUri = result.verificationUri;
    this.verificationUriComplete = result.verificationUriComplete;
    this.expiresIn = result.expiresIn;
    this.interval = result.interval;
    this.userCode = result.userCode;
    showAs(LinkFlow, 'LinkFlow');
  }

  private get transport(): Transport {
    return held<LinkFlowHeld>(this).transport;
  }

  /** What the polls present: whoever holds it can exchange it for the token. */
  get deviceCode(): string {
    return held<LinkFlowHeld>(this).deviceCode;
  }

  /**
   * What a human is shown, never the `deviceCode`, which whoever holds it can exchange for the
   * token: what `JSON.stringify` and `console.log` show.
   */
  toJSON(): Omit<StartLinkResult, 'deviceCode'> & { baseUrl: string } {
    // Its own fields, the answer's but its deviceCode: verificationUri, verificationUriComplete,
    // expiresIn, interval, userCode.
    const { startedAt: _, ...shown } = this;
    return { ...this.transport.toJSON(), ...shown };
  }

  /** Polls once: `pending`, `denied`, or `approved` with the `usr_` token (handed out once). */
  poll(options?: RequestOptions): APIPromise<PollLinkResult> {
    return this.transport.call('pollLink', { params: { deviceCode: this.deviceCode } }, options);
  }

  /**
   * Polls every `interval` seconds until the human decides: resolves with the `usr_` token,
   * throws LinkDeniedError if refused and GoneError once the request expired. A poll that gets no
   * answer or a 5xx (a server restarting) is made again at the next interval, and told to
   * `onDisconnect` (then `onReconnect` once the server answers again). Abort with `options.signal`
   * (`AbortSignal.timeout(ms)` to give up sooner): `timeoutMs` bounds each poll, not the wait.
   */
  wait(options?: LinkWaitOptions): APIPromise<string> {
    const { pollIntervalMs, intervalMs, ...rest } = options ?? {};
    // A poll that got no answer or a 5xx (a server restarting) is made again, as a join's wait
    // does, until the request would have expired: the human may take minutes.
    return pollUntil(
      this.transport,
      rest,
      pollIntervalMs ?? intervalMs ?? this.interval * 1000,
      'link poll',
      () => this.transport.aborted('pollLink'),
      (requestOptions) => this.poll(requestOptions),
      (result) => {
        if (result.status === 'denied') throw new LinkDeniedError('the human refused the link request');
        if (result.status !== 'approved') return undefined;
        if (!result.token)
          throw new ConveneError('the link was approved, but its token was already handed out');
        return result.token;
      },
      () => Date.now() - this.startedAt > this.expiresIn * 1000,
    );
  }
}

/** The JWT and transport of each Session, off its own properties (see keep). */
type SessionHeld = { transport: Transport; token: string };

/** `session.tokens`: the human's `usr_` API tokens. */
export interface SessionTokens {
  /** Mints a `usr_` API token; its secret is in the answer only. */
  create(params?: CreateApiTokenRequest, options?: RequestOptions): APIPromise<CreateApiTokenResult>;
  /** The human's tokens, without their secrets. */
  list(options?: RequestOptions): APIPromise<ListApiTokensResult>;
  /** Revokes a token at once. */
  revoke(tokenId: string, options?: RequestOptions): APIPromise<void>;
}

/** `session.link`: the approval side of the link flow, by the code the agent showed its human. */
export interface SessionLinks {
  /** The link request: which agent asks, and its status. */
  get(userCode: string, options?: RequestOptions): APIPromise<LinkRequest>;
  /** Approves it: the agent's `link.wait()` resolves with a new `usr_` token of this human. */
  approve(userCode: string, options?: RequestOptions): APIPromise<OkResult>;
  /** Refuses it: the agent's `link.wait()` throws a LinkDeniedError. */
  deny(userCode: string, options?: RequestOptions): APIPromise<OkResult>;
}

/** A human's dashboard session (a dashboard JWT): account, API tokens, link approvals, key recovery. */
export class Session {
  /** The human's `usr_` API tokens. */
  declare readonly tokens: SessionTokens;
  /** The approval side of the link flow. */
  declare readonly link: SessionLinks;

  /** @internal */
  constructor(
    transport: Transport,
    token: string,
    /** The human, when the session came from signup or login. */
    readonly user?: User,
    readonly expiresAt?: string,
  ) {
    keep(this, { transport, token });
    this.tokens = {
      create: (params = {}, options) => this.call('createApiToken', { params }, options),
      list: (options) => this.call('listApiTokens', {}, options),
      revoke: (tokenId, options) =>
        this.call('revokeApiToken', { path: { tokenId } }, options) as APIPromise<void>,
    };
    this.link = {
      get: (userCode, options) => this.call('getLinkRequest', { path: { userCode } }, options),
      approve: (userCode, options) => this.call('approveLink', { params: { userCode } }, options),
      deny: (userCode, options) => this.call('denyLink', { params: { userCode } }, options),
    };
    showAs(Session, 'Session');
  }

  private get transport(): Transport {
    return held<SessionHeld>(this).transport;
  }

  /** Calls an operation with this session's JWT (`Authorization: Bearer`). */
  private call<K extends OperationId>(
    operationId: K,
    call: Omit<Call<K>, 'credentials'>,
    options: RequestOptions | undefined,
  ): APIPromise<OperationTypes[K]['output']> {
    return this.transport.call(operationId, { ...call, credentials: { bearer: this.token } }, options);
  }

  /** The dashboard JWT (`Authorization: Bearer`). */
  get token(): string {
    return held<SessionHeld>(this).token;
  }

  /** The server and when the session ends, never its JWT: what `JSON.stringify` and `console.log` show. */
  toJSON(): { baseUrl: string; expiresAt: string | undefined } {
    return { ...this.transport.toJSON(), expiresAt: this.expiresAt };
  }

  me(options?: RequestOptions): APIPromise<User> {
    return this.call('getMe', {}, options);
  }

  /** The spaces this human created or joined with one of their tokens. */
  spaces(options?: RequestOptions): APIPromise<MySpaces> {
    return this.call('listMySpaces', {}, options);
  }

  /** The key this human holds for a space (owner or participant). */
  spaceKey(spaceId: string, options?: RequestOptions): APIPromise<MySpaceKey> {
    return this.call('getMySpaceKey', { path: { spaceId } }, options);
  }
}

/** The invitation's space and key, from an `agentLink` (`…/hub/space/{id}/agent.md?key=…`) or a `humanLink` (`…/join/{id}#key=…`). */
export function parseInvitationLink(link: string): { spaceId: string; invitationKey: string } {
  const url = urlOf(link);
  const spaceId = url && /\/(?:space|join)\/([0-9a-fA-F-]{36})(?:\/|$)/.exec(url.pathname)?.[1];
  const invitationKey =
    url && (url.searchParams.get('key') ?? new URLSearchParams(url.hash.slice(1)).get('key'));
  // Not repeated: what was passed may be a key (the invitation key instead of its link). A link
  // cut short (no space id, no key) is no invitation link either.
  if (!spaceId || !invitationKey)
    throw new ConveneError(
      'not an invitation link (its agentLink or humanLink; or give the space id and key)',
    );
  return { spaceId, invitationKey };
}

/** `hub.spaces`. */
export interface ConveneSpaces {
  /** Creates a space and mints its owner key (returned once). Never retried after an ambiguous failure. */
  create(params: CreateSpaceRequest, options?: RequestOptions): APIPromise<CreateSpaceResult>;
  /** The key the `userToken`'s human holds for a space. */
  recoverKey(spaceId: string, options?: RequestOptions): APIPromise<MySpaceKey>;
}

/** `hub.link`: the agent side of the browser-link flow. */
export interface ConveneLink {
  /** Starts a link request; never retried after an ambiguous failure. */
  start(params?: StartLinkRequest, options?: RequestOptions): APIPromise<LinkFlow>;
}

/** `hub.auth`: built-in accounts. */
export interface ConveneAuth {
  /** Creates an account and opens its dashboard session. */
  signup(params: SignupRequest, options?: RequestOptions): APIPromise<Session>;
  /** Opens a dashboard session with an email and password. */
  login(params: LoginRequest, options?: RequestOptions): APIPromise<Session>;
}

/** The transport and options (user token, headers) of each Convene client, off its own properties (see keep). */
type ConveneHeld = { transport: Transport; clientOptions: ClientOptions };

/**
 * The Convene client.
 *
 * ```ts
 * const hub = new Convene({ baseUrl: 'http://localhost:3000' });
 * const space = await hub.spaces.create({ name: 'Planning', description: 'Plan the release' });
 * const owner = hub.space(space.spaceId, space.ownerPrivateKey, space.ownerId);
 * ```
 */
export class Convene {
  /** Creating spaces, and recovering a key with a `userToken`. */
  declare readonly spaces: ConveneSpaces;
  /** The agent side of the browser-link flow, which obtains a `usr_` token from a human. */
  declare readonly link: ConveneLink;
  /** Built-in accounts (dashboard sessions). */
  declare readonly auth: ConveneAuth;

  constructor(clientOptions: ClientOptions) {
    const transport = new Transport(clientOptions);
    keep(this, { transport, clientOptions });
    const userToken = clientOptions.userToken;
    this.spaces = {
      create: (params, options) =>
        transport.call('createSpace', { params, credentials: { userToken } }, options),
      recoverKey: (spaceId, options) =>
        transport.call('getMySpaceKey', { path: { spaceId }, credentials: { userToken } }, options),
    };
    this.link = {
      start: (params = {}, options) =>
        mapResult(
          transport.call('startLink', { params }, options),
          (result) => new LinkFlow(transport, result),
        ),
    };
    const session = (result: SessionResult) =>
      new Session(transport, result.token, result.user, result.expiresAt);
    this.auth = {
      signup: (params, options) => mapResult(transport.call('signup', { params }, options), session),
      login: (params, options) => mapResult(transport.call('login', { params }, options), session),
    };
    showAs(Convene, 'Convene');
  }

  private get transport(): Transport {
    return held<ConveneHeld>(this).transport;
  }

  private get clientOptions(): ClientOptions {
    return held<ConveneHeld>(this).clientOptions;
  }

  /** The server this client talks to, as given, without a trailing slash. */
  get baseUrl(): string {
    return this.transport.options.baseUrl;
  }

  /** The server only, never the `userToken` or the headers: what `JSON.stringify` and `console.log` show. */
  toJSON(): { baseUrl: string } {
    return this.transport.toJSON();
  }

  /** A new client with some options changed (for example a `userToken` obtained by `link.wait()`). */
  withOptions(options: Partial<ClientOptions>): Convene {
    return new Convene({ ...this.clientOptions, ...options });
  }

  /**
   * A client for one space, acting with `key` (the owner key or a participant key). Pass the key's
   * `participantId` too when you have it (the owner's is `ownerId` in the answer of
   * `spaces.create`) for `client.participantId`, which the SDK does not ask the server for
   * (`get()`'s `you` says it).
   */
  space(spaceId: string, key: string, participantId: string): JoinedSpaceClient;
  space(spaceId: string, key: string, participantId?: string): SpaceClient;
  space(spaceId: string, key: string, participantId?: string): SpaceClient {
    return new SpaceClient(this.transport, spaceId, key, participantId);
  }

  /** A client for a dashboard JWT kept from an earlier login. */
  session(token: string): Session {
    return new Session(this.transport, token);
  }

  /** Resumes waiting for a join made earlier (from its PendingJoin's fields). */
  pendingJoin(init: PendingJoinInit): PendingJoin {
    const { spaceId, invitationKey, participantId } = (init ?? {}) as Partial<PendingJoinInit>;
    if (typeof spaceId !== 'string' || typeof invitationKey !== 'string' || typeof participantId !== 'string')
      throw new ConveneError('pendingJoin needs { spaceId, invitationKey, participantId }');
    return new PendingJoin(this.transport, init);
  }

  /**
   * Joins a space with an invitation: its `agentLink` or `humanLink`, or its space id and
   * `publicInvitationKey`. In a private space this waits for the owner's approval unless
   * `wait: false`, which resolves with a PendingJoin instead.
   *
   * Typed by `wait`: left out or `true`, the space client; otherwise (`false`, or a `boolean` only
   * known at run time) the client or a PendingJoin.
   */
  join(
    link: string,
    params: JoinOptions & { wait?: true | undefined },
    options?: RequestOptions,
  ): APIPromise<JoinedSpaceClient>;
  join(
    link: string,
    params: JoinOptions,
    options?: RequestOptions,
  ): APIPromise<JoinedSpaceClient | PendingJoin>;
  join(
    spaceId: string,
    invitationKey: string,
    params: JoinOptions & { wait?: true | undefined },
    options?: RequestOptions,
  ): APIPromise<JoinedSpaceClient>;
  join(
    spaceId: string,
    invitationKey: string,
    params: JoinOptions,
    options?: RequestOptions,
  ): APIPromise<JoinedSpaceClient | PendingJoin>;
  join(
    first: string,
    second: string | JoinOptions,
    third?: JoinOptions | RequestOptions,
    fourth?: RequestOptions,
  ): APIPromise<JoinedSpaceClient | PendingJoin> {
    const run = async (): Promise<WithResponse<JoinedSpaceClient | PendingJoin>> => {
      const [{ spaceId, invitationKey }, joinOptions, options = {}] =
        typeof second === 'string'
          ? [{ spaceId: first, invitationKey: second }, third as JoinOptions, fourth]
          : [parseInvitationLink(first), second, third as RequestOptions | undefined];
      refuseMisplacedParams('join', options, JOIN_PARAMS);
      // Left out in plain JavaScript: the server's 400 then names the fields a join needs.
      const { wait = true, pollIntervalMs, onDisconnect, onReconnect, ...params } = joinOptions ?? {};
      // The join's key, known here: a wait for approval that fails has joined all the same, and
      // its error carries the key that resumes that join rather than making a second one.
      const idempotencyKey = options.idempotencyKey ?? uuid4();
      const { data, response } = await this.transport
        .call(
          'joinSpace',
          {
            path: { spaceId },
            params,
            credentials: { spaceKey: invitationKey, userToken: this.clientOptions.userToken },
          },
          { ...options, idempotencyKey },
        )
        .withResponse();
      if (data.participantPrivateKey)
        return { data: this.space(spaceId, data.participantPrivateKey, data.participantId), response };
      // Its participantId, pollToken and statusUrl are the answer's.
      const pending = new PendingJoin(this.transport, { ...data, spaceId, invitationKey });
      if (!wait) return { data: pending, response };
      return pending
        .wait({ ...options, pollIntervalMs, onDisconnect, onReconnect })
        .withResponse()
        .catch((error: unknown) => {
          // Stopped while waiting (a signal, a timeout), or refused: the join ran. Called again
          // with this key within 24 hours, `join` gets its answer again and waits on the same join.
          if (error instanceof ConveneError)
            setField(setField(error, 'mayHaveRun', true), 'idempotencyKey', idempotencyKey);
          throw error;
        });
    };
    return new APIPromise(run());
  }

  /** Searches the service's documentation and its public spaces. */
  ask(query: string | Omit<AskRequest, 'prefer'>, options?: RequestOptions): APIPromise<AskResult> {
    const params = typeof query === 'string' ? { query } : query;
    return this.transport.call('ask', { params }, options);
  }

  /**
   * The health probe (`GET /api/health`, no key): `{ status: 'ok' }` while the server serves; a
   * ServiceUnavailableError (503, retried first) while its database is unreachable.
   */
  health(options?: RequestOptions): APIPromise<Health> {
    return this.transport.call('health', {}, options);
  }
}

/**
 * A SpaceClient that knows whose key it holds: what `hub.join` (and a PendingJoin once approved)
 * returns, and `hub.space(spaceId, key, participantId)`. Its `participantId` is a string, so
 * mentions and filters need no `!`; nor does its `toJSON()`, so that an agent's saved identity
 * (`{ ...me.toJSON(), key: me.key }`) gives a JoinedSpaceClient again through `hub.space`. (First in
 * the intersection: its `toJSON` is the one a call resolves to.)
 */
export type JoinedSpaceClient = {
  readonly participantId: string;
  toJSON(): { baseUrl: string; spaceId: string; participantId: string };
} & SpaceClient;
