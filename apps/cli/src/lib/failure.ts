import {
  AbortError,
  ConnectionError,
  ConveneError,
  LockedError,
  NotFoundError,
  RateLimitError,
  TimeoutError,
} from '@convene/sdk';
import type { LineParts } from './command-line';
import { type Context, isLoopback, WAIT_MAX_MS } from './context';
import { CliError, isSpaceClosed } from './errors';
import { ExitCode, stoppedBy } from './exit-codes';
import { isNotConvene, notConvene } from './not-convene';
import { shellWord, verbatim } from './quote';
import type { StoredSpace } from './store';
import { suggest } from './suggest';

/** An abort: the SDK's AbortError, or the runtime's (a fetch or a wait cut off by the run's signal). */
export const isAbort = (error: unknown): boolean =>
  error instanceof AbortError || (error instanceof Error && error.name === 'AbortError');

/**
 * Turns whatever a command threw into a CliError: what went wrong (the server's own words), the
 * exit code, and what to try next given what the command was using (a space key, the dashboard
 * session, or nothing).
 */
export function explain(error: unknown, ctx: Context): CliError {
  const failure = explained(error, ctx);
  // The SDK's error, or the one a command's own words were made from (a 409 it explains, a save
  // that failed): either way, whether the server may have done it is said.
  const cause = error instanceof ConveneError ? error : failure.cause;
  return cause instanceof ConveneError ? perhapsDone(failure, cause, ctx) : failure;
}

/**
 * `explain` without whether the server may have done it, which `explain` adds from the failure's
 * cause: for a command that words its own failure from this one and throws it (`artifact edit`'s
 * "could not save"), so that it is said once, when that failure is explained in turn.
 */
export function explained(error: unknown, ctx: Context): CliError {
  if (error instanceof CliError) return error;
  if (speaksPlainHttp(error, ctx.server)) return plainHttp(ctx.server, error);
  if (error instanceof ConnectionError || error instanceof TimeoutError) {
    // Something took the request and closed the connection, or kept it unanswered: it was reached.
    const reached =
      error instanceof TimeoutError ||
      (error.mayHaveRun && connectionState(error) === 'closed the connection without answering');
    const keysHere = ctx.keysHere(ctx.server);
    const hint = unreachableHint(ctx.server, ctx.urlIsExplicit, { error, keysHere });
    // The command's server (not an invitation's) that no key saved here is for, where some are
    // saved for another: perhaps the one meant.
    const elsewhere = reached || keysHere || ctx.server !== ctx.url ? undefined : keysSavedElsewhere(ctx);
    return new CliError(`${reached ? 'no answer from' : 'cannot reach'} ${ctx.server}: ${error.message}`, {
      hint: elsewhere ? `${hint} ${elsewhere}` : hint,
      cause: error,
    });
  }
  if (isNotConvene(error)) return notConvene(error, ctx.server);
  if (isAbort(error)) {
    // Aborted by the run's signal (Ctrl-C, SIGTERM, SIGHUP): its code, as a shell reports it.
    const stop = ctx.signal.aborted ? stoppedBy(ctx.signal) : undefined;
    return new CliError(stop?.said ?? 'interrupted', { exitCode: stop?.exitCode ?? ExitCode.interrupted });
  }
  if (error instanceof ConveneError) {
    const failure = fromStatus(error, ctx);
    // The server's code and status reach --json output from the cause (serverFields).
    failure.cause ??= error;
    return failure;
  }
  if (isFileSystemError(error)) return fileError(error);
  const message = error instanceof Error ? error.message : String(error);
  return new CliError(message, {
    hint: 'This looks like a bug in convene; please report it with the command you ran.',
    cause: error,
  });
}

/**
 * A write that failed though the server may have done it (the SDK's `mayHaveRun`: an attempt's
 * answer was lost, or a 5xx): said, with how to look, since running the command again could do it
 * twice (each run is a new request to the server, not a replay of the first); `--json` gets
 * `mayHaveRun: true`. A read changes nothing either way.
 */
function perhapsDone(failure: CliError, error: ConveneError, ctx: Context): CliError {
  if (!error.mayHaveRun || error.method === undefined || error.method === 'GET') return failure;
  // Whatever answered there was no Convene server (plain HTTP at an https:// address, or not HTTP,
  // or an HTTP answer without Convene's header that no proxy in front of one gives for a request it
  // passed on, as a 502 or a 504 may be): nothing ran.
  if (
    speaksPlainHttp(error, ctx.server) ||
    connectionState(error) === 'answers, but not in HTTP' ||
    (isNotConvene(error) && error.status !== 502 && error.status !== 504)
  )
    return failure;
  // A send is the one command that takes a key of its own: sent again under this one, it is
  // answered as the first attempt was if that ran, and posted once if not.
  const key = error.operation === 'sendMessage' ? error.idempotencyKey : undefined;
  const check = mayHaveBeenDone(ctx, error.operation, key);
  return new CliError(failure.message, {
    exitCode: failure.exitCode,
    hint: failure.hint ? `${check} ${failure.hint}` : check,
    details: { ...failure.details, mayHaveRun: true, ...(key ? { idempotencyKey: key } : {}) },
    cause: failure.cause ?? error,
  });
}

/**
 * What a change whose outcome is not known (its answer lost, or a signal that stopped the run while
 * it was out) may have done, by its operation, with the command that shows whether it did, where
 * there is one; `key`, a send's Idempotency-Key, which sends it again once at most.
 */
export function mayHaveBeenDone(ctx: Context, operation: string | undefined, key?: string): string {
  const look = (words: string, what: string, options: Parameters<typeof suggest>[2] = {}) =>
    `\`${suggest(ctx, words, options)}\` ${what}.`;
  const document = { args: [ctx.artifact?.named ?? verbatim('ARTIFACT')] };
  switch (operation) {
    case 'sendMessage':
      return `The message may have been sent all the same: \`${suggest(ctx, 'messages')}\` shows whether it was${
        key
          ? `; sent again with \`--idempotency-key ${shellWord(key)}\` (within 24 hours), it cannot be posted twice.`
          : ', before you send it again.'
      }`;
    case 'createSpace':
      return spaceMayExist(ctx);
    case 'writeArtifact':
    case 'restoreArtifactVersion':
      return versionMaySaved(ctx);
    case 'closeSpace':
      return `The space may have been closed all the same: ${look('space list', 'shows whether it was')}`;
    case 'updateSpace':
      return `The change may have been saved all the same: ${look('space show', 'shows the space as it is')}`;
    case 'createInvitation':
      return `An invitation key may have been made all the same; shown to nobody, it lets nobody in. ${look('invite', 'makes one to hand out')}`;
    case 'approveParticipant':
    case 'kickParticipant':
    case 'muteParticipant':
    case 'unmuteParticipant':
      return `It may have been done all the same: ${look('participants', 'shows each one’s status')}`;
    case 'leaveSpace':
      return `You may have left all the same: the same ${look('leave', 'again only forgets the space here if you did', { always: true })}`;
    case 'ackInbox':
      return `Your read position may have moved all the same: ${look('inbox', 'shows what is still unread')}`;
    case 'createWebhook':
      return `The webhook may have been added all the same: ${look('webhook list', 'shows whether it was')}`;
    case 'deleteWebhook':
      return `The webhook may have been removed all the same: ${look('webhook list', 'shows whether it was')}`;
    case 'createArtifact':
      return `The document may have been created all the same: ${look('artifact list', 'shows whether it was')}`;
    case 'lockArtifact':
      return `The lock may have been taken all the same: it lapses by itself, or ${look('artifact unlock', 'releases it', document)}`;
    case 'unlockArtifact':
      return `The lock may have been released all the same: ${look('artifact list', 'shows who holds each lock')}`;
    case 'createApiToken':
      return `A token may have been created all the same, shown nowhere: ${look('token list', 'lists it', {})} \`${suggest(ctx, 'token revoke', { args: [verbatim('NAME')] })}\` revokes it.`;
    case 'revokeApiToken':
      return `The token may have been revoked all the same: ${look('token list', 'shows whether it was')}`;
    default:
      return 'The server may have done it all the same: look before you run it again.';
  }
}

/**
 * A space create whose answer was lost (the connection, or Ctrl-C): the server hands the owner key
 * out once, in that answer, and createSpace is never replayed by its Idempotency-Key, so a space it
 * made is not kept here. A creator who sent a `usr_` token (logged in) finds it on the dashboard,
 * and `space use ID` recovers its key from the account; anyone else cannot get the key back, and
 * the space, which nobody can use, closes at its time to live. Either way a new create is a new
 * space.
 */
export function spaceMayExist(ctx: Context): string {
  let loggedIn = false;
  try {
    loggedIn = ctx.userToken() !== undefined;
  } catch {
    // A credential file that cannot be read now: said as for nobody logged in, with the dashboard.
  }
  const ttl = 'it closes by itself at the end of its time to live (--ttl; 24 hours when not given)';
  return (
    'The space may have been created all the same, and its owner key is not saved here: the server gives that key only once, in the answer that was lost. ' +
    (loggedIn
      ? `You are logged in: if it was created, your dashboard lists it, and \`convene space use ID\` recovers its key; else ${ttl}. `
      : `You were not logged in, so no account holds its key either: nobody can get it back or use the space, and ${ttl}. `) +
    'Run the same `convene space create` again for a new space.'
  );
}

/** Whether the failed call was one that saves a document's version: a write or a restore. */
export const savesAVersion = (error: ConveneError): boolean =>
  error.operation === 'writeArtifact' || error.operation === 'restoreArtifactVersion';

/** A document's write whose answer was lost: where to see whether it saved a version. */
export const versionMaySaved = (ctx: Context): string =>
  `A new version may have been saved all the same: \`${suggest(ctx, 'artifact history', { args: [ctx.artifact?.named ?? verbatim('ARTIFACT')] })}\` shows whether it was.`;

/**
 * Whether a connection to an https:// address failed because what answers there speaks plain
 * HTTP: OpenSSL reads its answer (`HTTP/1.1 400 …`) as a TLS record of an unknown version, or of
 * an impossible length. Something answers, so "no server answers there" (and a server to start,
 * which would find the port taken) would be wrong.
 */
export function speaksPlainHttp(error: unknown, server: string): error is ConnectionError {
  if (!(error instanceof ConnectionError) || !server.startsWith('https:')) return false;
  return (
    error.code === 'ERR_SSL_WRONG_VERSION_NUMBER' ||
    error.code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG' ||
    /wrong version number|packet length too long/.test(error.message)
  );
}

/** The server at an https:// address speaks plain HTTP: said so, with the http:// address to use. */
export function plainHttp(server: string, cause?: unknown): CliError {
  const http = server.replace(/^https:/, 'http:');
  return new CliError(`${server} answers in plain HTTP, not HTTPS: the TLS handshake failed`, {
    hint: `Use ${http} instead (--url or CONVENE_URL).`,
    ...(cause === undefined ? {} : { cause }),
  });
}

/** The codes of a connection something took, then reset or closed before answering. */
const CLOSED_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/**
 * What a failed connection says of the address, in words that follow it (`http://…:3000 does not
 * answer`): nothing listens there (refused, or nothing said why), or something does: it reset or
 * closed the connection before answering (another program on that port, or a Convene server
 * stopping), or it answered in another protocol than HTTP (Node's parser codes, `HPE_…`). Told
 * apart because to that second kind a server to start is no answer: it would find the port taken.
 */
export function connectionState(
  error: unknown,
): 'does not answer' | 'closed the connection without answering' | 'answers, but not in HTTP' {
  const code = error instanceof ConnectionError ? error.code : undefined;
  if (code?.startsWith('HPE_')) return 'answers, but not in HTTP';
  if (code !== undefined && CLOSED_CODES.has(code)) return 'closed the connection without answering';
  return 'does not answer';
}

/**
 * What to do about a server that does not answer: start one when it would run on this machine,
 * else check the address. Something that took the connection and never answered (a
 * TimeoutError), or reset or closed it, or answered in another protocol (connectionState), is
 * there already: a server to start would find the port taken. `keysHere`: keys of spaces on that
 * server are saved here: then the server to start is the one that keeps them, on its own data
 * (`./.data` where it was started, unless it was given DATA_DIR, --data-dir or a database URL),
 * which convene cannot know, so it says how to find it, not where it is. A line pasted from
 * elsewhere would start a new, empty server there (`./.data` of wherever it is typed), where
 * every saved space is "not found", and `convene leave` would then throw away keys that still
 * work on the real one; so not a line in backquotes to paste as it is, but where and with what it
 * must run.
 */
export function unreachableHint(
  server: string,
  explicit: boolean,
  {
    fromDoctor = false,
    error,
    keysHere = false,
  }: { fromDoctor?: boolean; error?: unknown; keysHere?: boolean } = {},
): string {
  const url = new URL(server);
  const local = isLoopback(url.hostname);
  // A local address answers a connection at once or refuses it: a wait that ran out means
  // something there took it (a remote one may be a connection, TLS or DNS that stalled).
  if (local && error instanceof TimeoutError) {
    return `Something at that address took the connection but did not answer in time: a server too busy or stuck, or another program on that port${fromDoctor ? '' : '; `convene doctor` checks it'}.`;
  }
  if (!local) {
    return `Check the address (--url or CONVENE_URL) and your connection${fromDoctor ? '' : '; `convene doctor` checks the server'}.`;
  }
  const port = portOf(url);
  const state = connectionState(error);
  if (state !== 'does not answer') {
    const maybe =
      state === 'answers, but not in HTTP' ? '' : ', or a Convene server that was stopping or restarting';
    return `Something on port ${port} ${state}: not a Convene server (another program listens there)${maybe}. Check the address (--url or CONVENE_URL) and what listens on that port${fromDoctor ? '' : '; `convene doctor` checks it'}.`;
  }
  const serve = serveCommand(url);
  const elsewhere = explicit ? '' : ', or point at another with --url or CONVENE_URL';
  if (keysHere) {
    // Sentences of their own: the data it needs again, then the other way out.
    return `No server answers there. Start the server that keeps your spaces again, on its own data: ${serve} as it was started, with its data (./.data in the directory it was started from, unless it was given --data-dir, DATA_DIR, --database-url or DATABASE_URL, which it needs again). Started on other data, it would be a new server, without your spaces.${explicit ? '' : ' Or point at another with --url or CONVENE_URL.'}`;
  }
  return `No server answers there. Start one in another terminal with \`${serve}\`${elsewhere}.`;
}

/** Context.keysElsewhereHint, or nothing when the credentials file cannot be read. */
function keysSavedElsewhere(ctx: Context): string | undefined {
  try {
    return ctx.keysElsewhereHint();
  } catch {
    return undefined;
  }
}

/** What to do when the server a command follows stops answering, for sayConnectionLost. */
export const awayHint =
  (ctx: Context) =>
  (error: unknown): string =>
    unreachableHint(ctx.server, ctx.urlIsExplicit, { error, keysHere: ctx.keysHere(ctx.server) });

/**
 * What to do about a space key the server answered 401 for, by why (the error's code): removed by
 * the owner, left, a key the server does not know (`fromDoctor`: then doctor is what says so).
 */
export function deadKeyHint(
  ctx: Context,
  error: ConveneError,
  space: StoredSpace,
  spaceName: string,
  { fromDoctor = false } = {},
): string {
  const leave = `\`${suggest(ctx, 'leave', { space, always: true })}\``;
  switch (error.code) {
    case 'participant_removed':
      return `The owner removed you. ${leave} forgets the space here; to come back, join again with an invitation link of the space (\`convene join LINK\`), which the owner approves if the space is private.`;
    case 'participant_left':
      return `You left this space. Join again with \`convene join LINK\`, or forget it here with ${leave}.`;
    case 'key_unknown':
      return `${unknownKeyHint(spaceName)} ${fromDoctor ? 'Check that this is the server that keeps it (--url or CONVENE_URL).' : '`convene doctor` checks the server and the default space’s key.'}`;
    default:
      return space.role === 'participant'
        ? `The key no longer works if you left or were removed. Join again with \`convene join LINK\`, or forget the space here with ${leave}.`
        : 'The owner key stops working when the space closes or expires. Create a new one with `convene space create NAME`.';
  }
}

/** The bad-input statuses: the command line asked for something the server refuses as such. */
const BAD_INPUT = new Set([400, 413, 422]);

/**
 * "400 name: too long" reads better without the number; --json keeps it as `status`. Without the
 * SDK's `(retry after 3 s)` that ends a 429's or a 503's message too: the hint says when
 * (refusedForNow), and `--json` has `retryAfter`.
 */
export const serverWords = (error: ConveneError): string =>
  withoutRetryNote(error.message.replace(/^\d{3} /, ''));

/** A message without the SDK's `(retry after 3 s)` at its end, for a line that says the wait its own way. */
export const withoutRetryNote = (message: string): string => message.replace(/ \(retry after \d+ s\)$/, '');

/**
 * The server's words in the CLI's: what the API calls an artifact is a document here, named when
 * the command knows which (`version 9 of "plan.md" not found`, not "of this artifact"), and
 * artifacts are documents (`a muted participant cannot lock documents`).
 */
const inDocumentTerms = (message: string, ctx: Context): string =>
  message
    .replace(/\bthis artifact\b/g, ctx.artifact ? JSON.stringify(ctx.artifact.name) : 'this document')
    .replace(/\bartifacts\b/g, 'documents');

/**
 * A 409 of the server (not a closed space): exit 6, its words, and `hint`, which a command that
 * knows why it conflicted can give (the default suits a race with another client).
 */
export function conflictError(
  error: ConveneError,
  hint = 'The state changed meanwhile; look again and retry.',
  message = serverWords(error),
): CliError {
  return new CliError(message, {
    exitCode: ExitCode.conflict,
    hint,
    details: detailsOf(error),
    cause: error,
  });
}

function fromStatus(error: ConveneError, ctx: Context): CliError {
  const message = inDocumentTerms(serverWords(error), ctx);
  const using = ctx.using;
  const spaceName = using.kind === 'space' ? `"${ctx.latestName(using.space)}"` : 'this space';
  if (isSpaceClosed(error)) return spaceClosed(ctx, spaceName, error);
  if (using.kind === 'invitation' && (error.status === 401 || error.status === 404)) {
    return new CliError(message, {
      exitCode: error.status === 401 ? ExitCode.auth : ExitCode.notFound,
      // An owner's or a participant's key given for an invitation: it is a seat already.
      hint:
        error.code === 'wrong_key_type'
          ? `That is a space key (its owner's or a participant's), not an invitation: \`${ctx.line('space use', { args: [verbatim(using.spaceId ?? 'SPACE_ID')], options: { '--key': verbatim('KEY') } })}\` saves it here, to act as whoever it is.`
          : error.code === 'participant_removed' || error.code === 'participant_left'
            ? 'That is the key of a participant who is no longer in the space, not an invitation: ask the owner for one (`convene invite`) and paste the whole link, quoted.'
            : 'The invitation may be mistyped, or its space closed or expired. Ask the owner for a fresh one (`convene invite`) and paste the whole link, quoted.',
      details: { status: error.status },
    });
  }
  if (error.status !== undefined && BAD_INPUT.has(error.status)) {
    return new CliError(message, {
      exitCode: ExitCode.usage,
      hint: ctx.commandName ? `See \`${ctx.commandName} --help\`.` : 'Check the values you passed.',
      details: { ...detailsOf(error), status: error.status },
    });
  }
  switch (error.status) {
    case 401:
      if (using.kind === 'session') {
        return new CliError(message, {
          exitCode: ExitCode.auth,
          hint: 'Log in again with `convene login --password`.',
        });
      }
      if (using.kind === 'space') {
        return new CliError(`${message} (${spaceName})`, {
          exitCode: ExitCode.auth,
          hint: deadKeyHint(ctx, error, using.space, spaceName),
        });
      }
      if (using.kind === 'server') {
        return new CliError(message, {
          exitCode: ExitCode.auth,
          hint: 'Your token may have been revoked: run `convene login` again.',
        });
      }
      return new CliError(message, { exitCode: ExitCode.auth, hint: 'Check the key you passed.' });
    case 403:
      return new CliError(message, {
        exitCode: ExitCode.auth,
        hint: `The owner decides who may send and edit (\`${suggest(ctx, 'participants')}\` shows your status).`,
      });
    case 404:
      return new CliError(message, {
        exitCode: ExitCode.notFound,
        hint:
          using.kind === 'space'
            ? notFoundHint(ctx, message)
            : 'Check the id, and that --url points at the right server.',
      });
    case 409:
      return conflictError(error);
    case 410:
      return new CliError(message, { exitCode: ExitCode.error, hint: 'Start over.' });
    case 423: {
      const locked = error instanceof LockedError ? error : undefined;
      return new CliError(message, {
        exitCode: ExitCode.conflict,
        hint: locked?.lockExpiresAt
          ? `The lock lapses at ${locked.lockExpiresAt} unless its holder keeps it.`
          : `Take the lock first with \`${suggest(ctx, 'artifact lock', { args: [ctx.artifact?.named ?? verbatim('ARTIFACT')] })}\`.`,
        details: detailsOf(error),
      });
    }
    case 429:
      return refusedForNow(error, message);
    case 503:
      // Refused while it stops or restarts, before anything ran (the SDK tried again meanwhile),
      // unless an earlier attempt's answer was lost (perhapsDone says so then).
      if (error.code === 'shutting_down') {
        const undone = error.mayHaveRun ? '' : ', and did not do it';
        return new CliError(`${ctx.server} is shutting down${undone}: ${message}`, {
          hint: 'Try again once it is back; `convene doctor` checks it.',
        });
      }
      return serverFailed(message);
    default:
      if (error.status !== undefined && error.status >= 500) return serverFailed(message);
      return new CliError(message, { exitCode: ExitCode.error, details: detailsOf(error) });
  }
}

/** A 5xx: the server failed (a write may have run: see perhapsDone). */
const serverFailed = (message: string): CliError =>
  new CliError(`the server failed: ${message}`, { hint: 'Try again; `convene doctor` checks the server.' });

/**
 * A 429 (a rate limit, a space's message budget): refused for now, as a lock someone holds is,
 * exit 6, with which limit (the server's words: a budget says it is one), when to try again and,
 * when that is longer than convene waits by itself (WAIT_MAX_MS), that it does not; `--json` gets
 * the server's code and `retryAfter`.
 */
export function refusedForNow(error: ConveneError, message = serverWords(error)): CliError {
  const retryAfter = error instanceof RateLimitError ? error.retryAfter : undefined;
  const budget = /\bmessages? (per|a) minute\b/i.test(message);
  const why = budget
    ? ': the space’s owner sets this budget of messages a minute for each participant (`convene space show` shows the budget)'
    : retryAfter !== undefined && retryAfter * 1000 > WAIT_MAX_MS
      ? ': convene does not wait that long'
      : '';
  return new CliError(message, {
    exitCode: ExitCode.conflict,
    hint: `${tryAgainIn(error)}${why}.`,
    details: { ...detailsOf(error), ...(retryAfter !== undefined ? { retryAfter } : {}) },
    cause: error,
  });
}

/** When a 429 says to try again: `Try again in 42 s` (its Retry-After), else in a minute. */
function tryAgainIn(error: ConveneError): string {
  const wait = error instanceof RateLimitError ? error.retryAfter : undefined;
  return wait !== undefined ? `Try again in ${Math.max(1, Math.ceil(wait))} s` : 'Try again in a minute';
}

/** What a key the server does not know (`key_unknown`) is, and why it may be so. */
export const UNKNOWN_KEY =
  'not one the server knows: the credentials file was edited, or another server answers at this address';

/**
 * Why the server does not know a space's saved key (401 `key_unknown`, while the space is open:
 * a closed one says so by its own code): not a key that stopped working, which a person would
 * have to have been told of, but one it never issued for this space.
 */
const unknownKeyHint = (spaceName: string): string =>
  `The key saved here for ${spaceName} is ${UNKNOWN_KEY}.`;

/**
 * Where to look for what a space's 404 names: the server says what it did not find ("webhook not
 * found", "version 7 of this artifact not found"), so the hint lists that kind of thing. Read from
 * the message because these 404s share the generic code `not_found` (error-codes.ts has no code
 * per kind of thing); a 404 with a code of its own is told by it (`join_refused`, in `join`).
 */
function notFoundHint(ctx: Context, message: string): string {
  const doc = ctx.artifact?.named ?? verbatim('ARTIFACT');
  const command = (words: string, parts?: LineParts) => `\`${suggest(ctx, words, parts)}\``;
  const where: [RegExp, () => string][] = [
    [/^webhook\b/, () => `See the webhooks with ${command('webhook list')}.`],
    [/^version\b/, () => `${command('artifact history', { args: [doc] })} lists its versions.`],
    [/^artifact\b/, () => `See the documents with ${command('artifact list')}.`],
    [/^participant\b/, () => `See who is there with ${command('participants')}.`],
    [
      /^message\b/,
      () => `See the messages and their ids with ${command('messages', { options: { '--json': true } })}.`,
    ],
    [/^space\b/, () => spaceGoneHint(ctx.server, forgetLine(ctx))],
  ];
  const found = where.find(([subject]) => subject.test(message))?.[1];
  return found ? found() : `Check the name or id (${command('participants')}, ${command('artifact list')}).`;
}

/**
 * Whether Convene answered that it has no such space (404 `space not found`): a proxy's 404 (a
 * deploy under way, another site at the address) says nothing of the space.
 */
export function isSpaceGone(error: unknown): boolean {
  if (!(error instanceof NotFoundError)) return false;
  const said = (error.body as { error?: unknown } | undefined)?.error;
  return !isNotConvene(error) && /^space not found\b/.test(String(said));
}

/**
 * What to do of a saved space the server says it does not have: it was deleted after its
 * retention, or the server is not the one that keeps it (one started on other data, a new
 * database, at the same address). In that second case `leave` would throw away a key that still
 * works on the right server, so that is said first, and `leave --forget` (its command line: a
 * plain `leave` refuses) for a space known to be gone.
 */
export function spaceGoneHint(server: string, leave: string): string {
  return `${server} does not have this space: deleted after its retention, or this is not the server that keeps it (one started on other data, or on a new database, at the same address). If so, start that one instead: your key still works there. Once you know it is gone, \`${leave}\` forgets it here.`;
}

/**
 * The `convene leave SPACE --forget` that forgets a space the server says it does not have (of
 * `space`, else the one the command acted on): a plain `leave` refuses to, since the server may
 * not be the one that keeps it.
 */
export const forgetLine = (ctx: Context, space?: StoredSpace): string =>
  suggest(ctx, 'leave', { space, always: true, options: { '--forget': true } });

/**
 * A closed space, whichever status said so: exit 6 (a state conflict, as the exit codes list it),
 * and no "join again", which cannot help: closing is for good.
 */
function spaceClosed(ctx: Context, spaceName: string, error: ConveneError): CliError {
  const owner = ctx.using.kind === 'space' && ctx.using.space.role === 'owner';
  // Joining one: nothing of it is kept here for `leave` to forget.
  const joining = ctx.using.kind === 'invitation';
  const state = error.code === 'space_expired' ? 'has expired' : 'is closed';
  const spaceId = ctx.using.kind === 'space' ? ctx.using.space.spaceId : undefined;
  const leave = joining ? undefined : suggest(ctx, 'leave', { always: true });
  const others = othersSaved(ctx, spaceId);
  return new CliError(
    `${spaceName} ${state}: ${joining ? 'it takes no one new' : 'its keys no longer work'}`,
    {
      exitCode: ExitCode.conflict,
      hint: `${closedHint(ctx, spaceName, error, leave, others)}${owner ? `; \`${suggest(ctx, 'space create', { args: [verbatim('NAME')] })}\` starts a new one` : ''}.`,
      details: detailsOf(error),
    },
  );
}

/**
 * You were removed from the space a command follows (`tail`, `inbox --follow`): exit 4, as for a
 * key that stopped working, and what to do.
 */
export function removedFrom(ctx: Context, space: StoredSpace, refusal?: ConveneError): CliError {
  return new CliError(
    `you were removed from ${JSON.stringify(ctx.latestName(space))}: your key no longer works`,
    {
      exitCode: ExitCode.auth,
      hint: `\`${suggest(ctx, 'leave', { always: true, space })}\` forgets it here; to come back, join again with an invitation link of the space (\`convene join LINK\`), which the owner approves if the space is private.`,
      // As a command refused for it says it with --json: the refusal that ended the stream, or,
      // where the stream heard of the removal, what the server answers the key from now on.
      details: refusal ? serverFields(refusal) : { code: 'participant_removed', status: 401 },
    },
  );
}

/**
 * What to say of a closed space (`error`, the server's refusal that said so): by its owner or by
 * its time to live, for good; `leave`, when a key of it is kept here: the command line that
 * forgets it; and, when `others` (keys of other spaces are saved for this server), where they are.
 */
export function closedHint(
  ctx: Context,
  spaceName: string,
  error: ConveneError,
  leave: string | undefined,
  others: boolean,
): string {
  const named = `${spaceName[0]!.toUpperCase()}${spaceName.slice(1)}`;
  const over =
    error.code === 'space_expired'
      ? `${named} reached the end of its time to live and is over for good`
      : `${named} was closed by its owner, for good`;
  const list = others ? `\`${suggest(ctx, 'space list')}\` shows your other spaces` : '';
  const forget = leave ? `\`${leave}\` forgets it here` : '';
  return `${over}${forget || list ? '; ' : ''}${[forget, list].filter(Boolean).join(', and ')}`;
}

/** Whether keys of spaces other than `spaceId` are saved for this server (yes, when the file cannot be read). */
function othersSaved(ctx: Context, spaceId: string | undefined): boolean {
  try {
    return Object.keys(ctx.host().spaces).some((id) => id !== spaceId);
  } catch {
    return true;
  }
}

/**
 * What the server said of a failure beside its words, found along its causes, for `--json` error
 * output: its `code` (`lock_held`, `participant_muted`, `key_unknown`…) and HTTP `status`, so that
 * a script can tell one reason from another as the SDK's callers do. Empty for a failure the
 * server did not answer.
 */
export function serverFields(error: unknown): { code?: string; status?: number } {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 4; cause = cause.cause, depth++) {
    if (cause instanceof ConveneError) {
      return {
        ...(cause.code ? { code: cause.code } : {}),
        ...(cause.status !== undefined ? { status: cause.status } : {}),
      };
    }
  }
  return {};
}

function detailsOf(error: ConveneError): Record<string, unknown> {
  const body = error.body;
  if (!body || typeof body !== 'object') return {};
  const { error: _message, ...rest } = body as Record<string, unknown>;
  return rest;
}

/** A failed open, read or write of a file the command line named (`-o`, `--file`). */
function isFileSystemError(error: unknown): error is NodeJS.ErrnoException & { path: string } {
  const e = error as NodeJS.ErrnoException;
  return (
    error instanceof Error &&
    typeof e.code === 'string' &&
    typeof e.syscall === 'string' &&
    typeof e.path === 'string'
  );
}

const FILE_PROBLEMS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
  EPERM: 'not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EFBIG: 'the file is too large',
  EIO: 'input/output error',
};

/** A file system's failure in words (`no space left on the device`), else its own message. */
export const describeFileProblem = (error: NodeJS.ErrnoException): string =>
  FILE_PROBLEMS[error.code ?? ''] ?? error.message;

/**
 * `write()` of the file at `path`, whose failure then names it as an open's does (a write's own
 * error names no path, and would read as a bug of convene).
 */
export function writingTo<T>(path: string, write: () => T): T {
  try {
    return write();
  } catch (error) {
    const failure = error as NodeJS.ErrnoException;
    if (error instanceof Error && typeof failure.code === 'string') failure.path ??= path;
    throw error;
  }
}

/** A file that could not be opened, read or written, with its path and the reason in words. */
export function fileError(error: NodeJS.ErrnoException & { path: string }): CliError {
  const verb =
    !error.syscall || error.syscall === 'open' || error.syscall === 'read' ? 'open' : error.syscall;
  return new CliError(`cannot ${verb} ${error.path}: ${describeFileProblem(error)}`, {
    exitCode: error.code === 'ENOENT' ? ExitCode.notFound : ExitCode.error,
    hint: 'Check the path and its permissions.',
    cause: error,
  });
}

/** The port a server URL names, its scheme's when it names none. */
const portOf = (url: URL): string => url.port || (url.protocol === 'https:' ? '443' : '80');

/** How the server at `url` on this machine is started again on its port (3000, serve's default, is said without). */
export const serveCommand = (url: URL): string => {
  const port = portOf(url);
  return port === '3000' ? 'convene serve' : `convene serve --port ${port}`;
};
