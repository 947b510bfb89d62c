import type { OperationContract } from '@convene/contract';
import {
  authenticateHuman,
  authorizeReplay,
  beforeCommit,
  type Clock,
  type Db,
  type Deps,
  type Executor,
  IdempotencyBusyError,
  type IdempotencyGuard,
  IdempotencyMismatchError,
  type IdempotencyRecord,
  type IdempotencyStore,
  type StoredResponse,
  ValidationError,
  type WriteDeadline,
  within,
} from '@convene/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { operationOf, pathParam, pathPattern } from '../rest/route-table';
import { idempotencyCallerOf, presentedCredential, sha256 } from './client';
import { withCode } from './error-body';
import { toHttpError } from './errors';
import { writeDeadline } from './timeout';

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** A recorded answer's pseudo-header (never sent): the PUBLIC_URL of the node that recorded it. */
const RECORDED_AT = 'x-convene-recorded-at';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface IdempotencyPolicyOptions {
  store: IdempotencyStore;
  clock: Clock;
  /** How long a finished record is replayed (24 h). */
  ttlSeconds: number;
  /** How long a duplicate waits for the first request before answering 409 (10 s). */
  waitMs: number;
  /**
   * `METHOD /path` of writes never replayed whatever credential comes with them (path templates
   * with `{param}` segments): the credential-minting calls, where a retry must mint afresh.
   */
  neverReplayed: readonly string[];
  /**
   * `METHOD /path` of routes that apply an Idempotency-Key themselves, through `begin` (POST /mcp:
   * to the one tool call the POST holds).
   */
  handledByRoute: readonly string[];
  /** The answer of a record whose write recorded an outcome instead of a body (sendMessage). */
  renderOutcome: (outcome: unknown) => StoredResponse | undefined;
  /**
   * This node's PUBLIC_URL: a recorded answer names the URL of the node that wrote it (links,
   * Location), and a replay on another node names this one's instead, as everything it hands out.
   */
  publicUrl: string;
  /**
   * Throws what the operation would answer its credential now, if that no longer works (a key
   * of a participant removed since, of a space since closed): a recorded answer is given only
   * to a credential that still works.
   */
  authorizeReplay: (operation: OperationContract, caller: ReplayCaller) => Promise<void>;
}

/** The credentials of a replayed write, and the space its path names. */
export interface ReplayCaller {
  spaceId: string | undefined;
  key: string | undefined;
  bearer: string | undefined;
}

/**
 * A guarded write in flight: a write made with a credential and an Idempotency-Key. Its record is
 * written by the write's own transaction (`run`), or by the use case's own statement
 * (sendMessage: `guard` is handed to it), never after the answer.
 */
export interface GuardedRequest {
  readonly guard: IdempotencyGuard;
  /**
   * Runs the write and its record in one transaction: claims the scope (waiting, on any node,
   * for a duplicate still running), runs `work` in a savepoint with the transaction as its
   * database, stores the answer it renders, and commits. A refusal (4xx) is stored too, with
   * the savepoint's writes undone; a failure (5xx) stores nothing and commits nothing. Returns
   * the record to replay instead when a duplicate came first.
   */
  run<T>(
    db: Db,
    work: (tx: Executor) => Promise<{ value: T; response: StoredResponse }>,
    refusal: (error: unknown) => StoredResponse | undefined,
  ): Promise<{ value: T } | { replay: StoredResponse }>;
  /** The answer recorded for this scope by a duplicate that came first. */
  recorded(): Promise<StoredResponse>;
  /**
   * Stores the refusal of a write that changed nothing (the use case recorded no outcome), if it
   * can. Returns the answer of a duplicate recorded first instead, to be replayed
   * (IdempotencyMismatchError when that one was another request): it may have run before what
   * refused this one (a mute, a kick) committed, on another node.
   */
  refused(response: StoredResponse): Promise<StoredResponse | undefined>;
  /** The write is over (a use case that records its own outcome): same-node duplicates may go on. */
  release(): void;
}

interface InFlight {
  requestHash: string;
  /** Resolves when the write has committed or given up: a same-node duplicate may look again. */
  done: Promise<void>;
}

/** The answer a refusal (4xx) stores, as the one error mapping writes it; none for a failure (5xx). */
export function refusalOf(error: unknown, publicUrl: string): StoredResponse | undefined {
  const { status, headers, body } = toHttpError(error, publicUrl);
  // A 429 (a sender's message budget) is "not now", not an answer: its retry must run again.
  if (status >= 500 || status === 429) return undefined;
  return { status, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/** The record a write is kept under: method, path, credential (its hash) and Idempotency-Key. */
export const idempotencyScope = (method: string, path: string, credentialHash: string, key: string): string =>
  sha256([method, path, credentialHash, key].join('\n'));

/** JSON with object keys sorted, so a retry that orders its fields differently is the same request. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A request URL's path, without its query or a trailing slash. */
function pathOf(url: string): string {
  const at = url.indexOf('?');
  const path = at === -1 ? url : url.slice(0, at);
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
}

/**
 * The check before a replay (IdempotencyPolicyOptions' `authorizeReplay`), by the credential the
 * operation takes: a space key must still work in its space, a dashboard session still verify.
 */
export async function authorizeReplayOf(deps: Deps, operation: OperationContract, caller: ReplayCaller) {
  if (operation.security.includes('spaceKey'))
    await authorizeReplay(deps.db, deps.clock, operation.operationId, caller);
  else if (operation.security.includes('dashboardJwt')) await authenticateHuman(deps, caller.bearer);
}

/** A guarded write begun: the GuardedRequest to run or release, or the record to replay instead. */
export type Begun = GuardedRequest | { replay: StoredResponse };

/**
 * Starts a guarded write of a scope (idempotencyHooks' `begin`). REST's preHandler and MCP's tool
 * calls share it.
 */
export type IdempotencyGate = (
  scope: string,
  requestHash: string,
  /** The request's deadline: answered 503 already, it must not commit (see WriteDeadline). */
  deadline: WriteDeadline,
  /** Checks, once a record is found, that the caller's credential still works (throws if not). */
  authorizeReplay?: () => Promise<void>,
) => Promise<Begun>;

const guards = new WeakMap<FastifyRequest, GuardedRequest>();

/** Requests answered by the preHandler (a replay): their handler must not run (skipAnsweredHandlers). */
const answered = new WeakSet<FastifyRequest>();

/** The guarded write a request is, if it is one (set by the idempotency preHandler). */
export const guardOf = (request: FastifyRequest): GuardedRequest | undefined => guards.get(request);

/** Sends a stored answer again, marked as a replay. */
export const sendReplay = (reply: FastifyReply, response: StoredResponse) =>
  reply
    .code(response.status)
    .headers(response.headers)
    .header('Idempotency-Replayed', 'true')
    .send(response.body === '' ? undefined : response.body);

/**
 * Idempotency-Key on writes. The preHandler replays a finished write at once, keeps same-node
 * duplicates waiting for the first (up to `waitMs`, without a database connection), and marks
 * the request as a guarded write whose handler records it atomically (GuardedRequest). Requests
 * without the header cost nothing. Replays pass through the same onRequest hooks as any
 * request, so they carry fresh API-Version and rate-limit headers.
 */
export function idempotencyHooks(options: IdempotencyPolicyOptions): {
  preHandler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
  begin: IdempotencyGate;
} {
  const { store, clock } = options;
  const neverReplayed = options.neverReplayed.map(pathPattern);
  const inFlight = new Map<string, InFlight>();

  const answerOf = (record: IdempotencyRecord): StoredResponse => {
    const answer = record.response ? rebased(record.response) : options.renderOutcome(record.outcome);
    if (!answer) throw new Error('an idempotency record holds an outcome nobody renders');
    // A refusal stored before error bodies had codes is replayed with its code.
    return { ...answer, body: withCode(answer.status, answer.body) };
  };

  /** An answer as recorded: with the PUBLIC_URL it names, for a replay on another node. */
  const stamped = (response: StoredResponse): StoredResponse => ({
    ...response,
    headers: { ...response.headers, [RECORDED_AT]: options.publicUrl },
  });

  /** A recorded answer as this node gives it: the URLs of the node that recorded it made this one's. */
  const rebased = ({ headers: { [RECORDED_AT]: from, ...headers }, ...response }: StoredResponse) => {
    if (from === undefined || from === options.publicUrl) return { ...response, headers };
    const here = (text: string) => text.replaceAll(from, options.publicUrl);
    return {
      ...response,
      headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, here(value)])),
      // JSON writes a URL as it is (no escaped slash): the same text in the body.
      body: here(response.body),
    };
  };

  /** Waits for a same-node duplicate; false when it is still running at the deadline. */
  const waitFor = (first: InFlight, deadline: number): Promise<boolean> =>
    within(
      first.done.then(() => true),
      Math.max(0, deadline - Date.now()),
      false,
    );

  /**
   * Starts a guarded write of `scope` whose request hashes to `requestHash`: the record to replay
   * when a duplicate finished first (422 for another request under the same scope), after waiting
   * for a same-node duplicate still running (409 past `waitMs`); else the GuardedRequest its
   * handler records. Whoever gets one runs or releases it. `deadline` says whether the client was
   * already answered that the write failed (REST's 30 s timeout), so it must not commit.
   */
  const begin: IdempotencyGate = async (scope, requestHash, requestDeadline, authorizeReplay) => {
    // Real time, not the injected clock: this bounds a wait, it is not a TTL.
    const deadline = Date.now() + options.waitMs;
    for (;;) {
      for (let first = inFlight.get(scope); first; first = inFlight.get(scope)) {
        if (first.requestHash !== requestHash) throw new IdempotencyMismatchError();
        if (!(await waitFor(first, deadline))) throw new IdempotencyBusyError();
      }
      const record = await store.get(scope, clock.now());
      if (record) {
        // A key that stopped working since is told so, not what it did or that it reused the
        // Idempotency-Key; a refusal is replayed as it was (what the check says, or a 400 that a
        // dead key with a bad body gets anyway).
        if (record.requestHash !== requestHash) {
          await authorizeReplay?.();
          throw new IdempotencyMismatchError();
        }
        const answer = answerOf(record);
        if (answer.status < 400) await authorizeReplay?.();
        return { replay: answer };
      }
      // A duplicate may have started while the record was read.
      if (!inFlight.has(scope)) break;
    }

    let finish!: () => void;
    const mine: InFlight = { requestHash, done: new Promise<void>((resolve) => (finish = resolve)) };
    inFlight.set(scope, mine);
    let finished = false;
    const release = () => {
      if (finished) return;
      finished = true;
      if (inFlight.get(scope) === mine) inFlight.delete(scope);
      finish();
    };
    const now = clock.now();
    const guard: IdempotencyGuard = {
      scope,
      requestHash,
      now,
      expiresAt: new Date(now.getTime() + options.ttlSeconds * 1000),
    };
    return {
      guard,
      async run(db, work, refusal) {
        try {
          return await runGuarded(db, guard, work, refusal, requestDeadline);
        } finally {
          release();
        }
      },
      async recorded() {
        const found = await store.get(scope, clock.now());
        if (!found) throw new Error('no idempotency record to replay');
        if (found.requestHash !== requestHash) throw new IdempotencyMismatchError();
        return answerOf(found);
      },
      async refused(response) {
        // Best effort: nothing was written, so a retry that finds no record only runs again.
        const first = await store.recordRefusal(guard, stamped(response)).catch(() => undefined);
        if (!first) return undefined;
        if (first.requestHash !== requestHash) throw new IdempotencyMismatchError();
        return answerOf(first);
      },
      release,
    };
  };

  const preHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!WRITES.has(request.method)) return;
    const header = request.headers['idempotency-key'];
    if (header === undefined) return;
    const key = Array.isArray(header) ? header.join(', ') : header;
    if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH)
      throw new ValidationError(`Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`);

    const path = pathOf(request.url);
    const route = `${request.method} ${path}`;
    if (neverReplayed.some((pattern) => pattern.test(route)) || options.handledByRoute.includes(route))
      return;
    const credential = idempotencyCallerOf(request);
    // Anonymous writes are never replayed: there is no caller to scope the record to.
    if (credential === undefined) return;

    const scope = idempotencyScope(request.method, path, credential, key);
    // The body alone: no write reads a query, and unknown query parameters are ignored
    // (decisions.md), so a retry that adds one is the same request. (The newline before it is
    // where the query once was: records written then still match.)
    const requestHash = sha256(`\n${canonicalJson(request.body ?? null)}`);
    const operation = operationOf(request);
    const begun = await begin(
      scope,
      requestHash,
      writeDeadline(request),
      operation &&
        (() => {
          const presented = presentedCredential(request, { query: false });
          return options.authorizeReplay(operation, {
            spaceId: pathParam(operation.path, path, 'spaceId'),
            key: presented?.kind === 'space-key' ? presented.value : undefined,
            bearer: presented?.kind === 'jwt' ? presented.value : undefined,
          });
        }),
    );
    if ('replay' in begun) {
      answered.add(request);
      return sendReplay(reply, begun.replay);
    }
    // The same guard, watched: whether the handler took it up (ran it, or released it itself).
    let consumed = false;
    guards.set(request, {
      ...begun,
      run(db, work, refusal) {
        consumed = true;
        return begun.run(db, work, refusal);
      },
      release() {
        consumed = true;
        begun.release();
      },
    });
    // A handler that never records (a hijacked reply, a route that writes nothing) frees the
    // scope once answered; a recording one frees it when its write has committed or given up,
    // whenever its client leaves.
    reply.raw.once('close', () => {
      if (!consumed) begun.release();
    });
  };

  async function runGuarded<T>(
    db: Db,
    guard: IdempotencyGuard,
    work: (tx: Executor) => Promise<{ value: T; response: StoredResponse }>,
    refusal: (error: unknown) => StoredResponse | undefined,
    deadline: WriteDeadline,
  ): Promise<{ value: T } | { replay: StoredResponse }> {
    const outcome = await db.transaction(
      async (tx): Promise<{ value: T } | { replay: StoredResponse } | { refused: unknown }> => {
        const existing = await store.claim(tx, guard, options.waitMs);
        if (existing) {
          if (existing.requestHash !== guard.requestHash) throw new IdempotencyMismatchError();
          return { replay: answerOf(existing) };
        }
        let done: { value: T; response: StoredResponse };
        try {
          done = await tx.transaction((savepoint) => work(savepoint));
        } catch (error) {
          const refused = refusal(error);
          // A failure commits nothing: its retry runs again.
          if (!refused) throw error;
          // A refusal wrote nothing (its savepoint is undone) and is replayed as it was answered.
          await store.complete(tx, guard.scope, stamped(refused));
          return { refused: error };
        }
        // Answered 503 already (too slow): the client was told it did not happen, so it must not.
        beforeCommit(deadline);
        await store.complete(tx, guard.scope, stamped(done.response));
        return { value: done.value };
      },
    );
    if ('refused' in outcome) throw outcome.refused;
    return outcome;
  }

  return { preHandler, begin };
}

/**
 * Keeps the handler of a request the idempotency preHandler answered (a replay) from running.
 * Fastify runs the handler unless the answer has ended, and waits for it by `return reply`,
 * which also resolves when the client has gone: an answer still in its onSend hooks (the count
 * of a send's rate limit, a database round trip) had not ended, so the handler ran, without the
 * guard, and wrote the replayed write again (a fault trial: a client that gave up on a frozen
 * node, whose buffered retry ran once the node woke). An onRoute hook: it wraps every route
 * registered after it.
 */
export function skipAnsweredHandlers(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const handler = route.handler;
    route.handler = function (this: FastifyInstance, request, reply) {
      if (answered.has(request)) return reply;
      return handler.call(this, request, reply);
    };
  });
}
