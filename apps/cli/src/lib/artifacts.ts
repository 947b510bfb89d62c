import { randomUUID } from 'node:crypto';
import {
  type ArtifactView,
  ConveneError,
  type LockedArtifact,
  LockedError,
  type LockResult,
  UnlockError,
} from '@convene/sdk';
import { commandLine, type LineParts } from './command-line';
import type { Context } from './context';
import { formatSeconds, parseDuration } from './duration';
import { CliError, UsageError } from './errors';
import { ExitCode, stoppedBy } from './exit-codes';
import { isAbort, savesAVersion, versionMaySaved } from './failure';
import { GRACE_MS, interruptible } from './interrupt';
import type { Output } from './output';
import { choose } from './prompts';
import { type Value, verbatim } from './quote';
import { relative, when } from './render';
import { find, hintName, pick } from './resolve';
import { suggest } from './suggest';

/** How the document commands know a document: its id, or its whole name (not a name's start). */
export const documentNaming = {
  noun: 'document',
  id: (doc: { id: string }) => doc.id,
  name: (doc: { name: string }) => doc.name,
};

/**
 * A document as the command line of a hint names it among the space's `documents`: by its name
 * when that finds it alone (as `findArtifact` finds what it is given), else by its id (two
 * documents of one name, which the API takes, though `artifact create` refuses it).
 */
export function documentNamed<T extends { id: string; name: string }>(
  documents: readonly T[],
  doc: T,
): Value {
  return hintName(doc, documentNaming, (typed) => find(documents, typed, documentNaming));
}

/**
 * The space, the artifact named by a person (name or id) and the participants' names, from one
 * read of the space (its context bundle carries the artifacts' summaries and lock holders).
 */
export async function findArtifact(
  ctx: Context,
  spaceReference: string | undefined,
  given: string | undefined,
  usage: string,
) {
  const saved = ctx.space(spaceReference);
  const space = ctx.spaceClient(saved);
  const view = await ctx.readSpace(space);
  const reference = await choose(ctx.out, given, {
    message: 'Which document?',
    usage,
    items: view.artifacts,
    id: (a) => a.id,
    label: (a) => `${a.name} (v${a.version})`,
    none: () =>
      new CliError(`no documents in ${saved.name}`, {
        exitCode: ExitCode.notFound,
        hint: `Create one with \`${suggest(ctx, 'artifact create', { args: [verbatim('NAME')] })}\`.`,
      }),
  });
  const artifact = pick(view.artifacts, reference, {
    ...documentNaming,
    listCommand: suggest(ctx, 'artifact list'),
    where: saved.name,
  });
  const named = documentNamed(view.artifacts, artifact);
  ctx.artifact = { name: artifact.name, named };
  const names = new Map(view.participants.map((p) => [p.participantId, p.name]));
  return {
    saved,
    space,
    artifact,
    /** The document as a hint's command line names it (`hintName`). */
    named,
    names,
    heldByMe: artifact.lockedBy === saved.participantId,
    /** What a 423 is explained with: the holder's name, and whether you may force the lock. */
    lockContext: {
      artifactName: artifact.name,
      named,
      names,
      owner: saved.role === 'owner',
      ownerId: view.participants.find((p) => p.isOwner)?.participantId,
      command: (words: string, parts?: LineParts) => suggest(ctx, words, parts),
      // The space by its id, which names it in any configuration that holds a key for it, whatever
      // its default; no --url, which names the server as this one spells it, not as theirs does.
      ownerCommand: (words: string, parts: LineParts = {}) =>
        commandLine(words, { ...parts, options: { ...parts.options, '--space': verbatim(saved.spaceId) } }),
    },
  };
}

/** What explains a 423: the document, the participants' names, and whether you own the space. */
export interface LockContext {
  artifactName: string;
  /** The document as a hint's command line names it: its name, or its id when another shares it. */
  named: Value;
  names: ReadonlyMap<string, string>;
  /** The owner may release anyone's lock; a participant asks the owner to. */
  owner: boolean;
  /** The owner's participant id: a lock the owner holds is theirs to release, not to force. */
  ownerId?: string | undefined;
  /** The command line a hint suggests, on the document's space (`suggest`). */
  command: (words: string, parts?: LineParts) => string;
  /** The command line a hint asks the owner to run, in their own configuration. */
  ownerCommand: (words: string, parts?: LineParts) => string;
}

/** The longest `--wait`: a day (a lock left behind lapses within the server's lock lifetime). */
const MAX_LOCK_WAIT_S = 86_400;

/** A `--wait` value (`30s`, `5m`, `1h`), in milliseconds; undefined when the option was not given. */
export function parseLockWait(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const seconds = parseDuration(text);
  if (seconds === undefined || seconds < 1 || seconds > MAX_LOCK_WAIT_S)
    throw new UsageError(`--wait takes a duration from 1s to 24h (e.g. 30s, 5m, 1h), not "${text}"`);
  return seconds * 1000;
}

/** The `--wait` option of the commands that take a lock. */
export const LOCK_WAIT_OPTION = [
  '-w, --wait <duration>',
  'if someone else holds the lock, wait up to this long (30s, 5m, 1h) for it; Ctrl-C stops waiting',
] as const;

/**
 * Runs `take` (a lock call, or a write under a lock of its own) as explainingLocks does. With
 * `waitMs` (`--wait`), a lock someone else holds is said (who, until when) and waited for, up to
 * `waitMs` in all: `take` is called again with the SDK's own wait (it tries again with a growing
 * pause, never past the holder's expiry) and the run's signal, so Ctrl-C stops the wait (exit 130).
 * A lock still held when the time is up is explained as explainingLocks explains it.
 */
export async function waitingForLock<T>(
  ctx: Context,
  about: LockContext,
  waitMs: number | undefined,
  take: (wait?: { waitMs: number; signal: AbortSignal }) => Promise<T>,
): Promise<T> {
  const started = Date.now();
  try {
    return await take();
  } catch (error) {
    if (!(error instanceof LockedError && waitMs !== undefined))
      throw explainedLock(error, about, { waitable: true });
    const waiting = formatSeconds(waitMs / 1000);
    ctx.out.info(`${lockedFailure(error, about).message}; waiting up to ${waiting} for it (Ctrl-C to stop)`);
    ctx.handlesInterrupt = true;
    try {
      return await take({ waitMs: Math.max(0, waitMs - (Date.now() - started)), signal: ctx.signal });
    } catch (late) {
      if (ctx.signal.aborted && isAbort(late) && !mayHaveWritten(late))
        throw new CliError(`stopped waiting for the lock on "${about.artifactName}": nothing was done`, {
          exitCode: stoppedBy(ctx.signal).exitCode,
          hint: 'Run the same command again to wait again.',
          cause: late,
        });
      throw explainedLock(late, about, { waited: waiting });
    }
  }
}

/** What a lock call stopped by a signal says was not done (see takeLock). */
export interface LockUndone {
  /** `interrupted: …` once nothing is left taken: `nothing was edited`. */
  undone: string;
  /**
   * Whether `undone` stays true should the lock be left held (an edit, which opens no editor), so
   * that it is said then too; `artifact lock`'s own is not.
   */
  whateverTheLock: boolean;
}

/**
 * Takes the document's lock with the run's signal (`artifact lock`, and `artifact edit` before its
 * editor), as a write takes its own: Ctrl-C (SIGTERM, SIGHUP) while a lock call is out, or while
 * `--wait` waits for someone else's lock, ends it at once. A lock call cut off may have taken the
 * lock all the same, and nobody would release it before it lapses: the first call is made again
 * with its Idempotency-Key (the server answers it as it answered the call, or takes the lock now),
 * a later one of `--wait` is looked for in the document, and a lock of yours that was not yours
 * before is released, within GRACE_MS. When that cannot be known (no answer in time, the call
 * still running), the error says the lock may be held, and how to release it, and not that
 * nothing was done.
 */
export async function takeLock(
  ctx: Context,
  found: FoundArtifact,
  waitMs: number | undefined,
  { undone, whateverTheLock }: LockUndone,
): Promise<LockResult> {
  const { space, artifact } = found;
  const first = randomUUID();
  const unlock = `\`${suggest(ctx, 'artifact unlock', { args: [found.named] })}\``;
  const mayBeHeld = `The lock may have been taken all the same: it lapses by itself, or ${unlock} releases it.`;
  const Undone = `${undone[0]!.toUpperCase()}${undone.slice(1)}.`;
  return interruptible(
    ctx,
    async (signal) => {
      try {
        return await waitingForLock(ctx, found.lockContext, waitMs, (wait) =>
          space.artifacts.lock(artifact.id, { ...(wait ?? { idempotencyKey: first }), signal }),
        );
      } catch (error) {
        if (!signal.aborted) throw error;
        // `--wait` stopped says so itself (`stopped waiting for the lock …: nothing was done`, the
        // request it stopped its cause); anything else is the stop's.
        const waiting = error instanceof CliError;
        const call = waiting ? error.cause : error;
        const stop = stoppedBy(signal);
        const stopped = (held: boolean, hint: string | undefined) =>
          new CliError(
            waiting
              ? held
                ? `stopped waiting for the lock on "${artifact.name}"`
                : error.message
              : held && !whateverTheLock
                ? stop.said
                : `${stop.said}: ${undone}`,
            {
              exitCode: stop.exitCode,
              ...(hint ? { hint } : {}),
              // Without its cause, which `explain` would say may have done something more.
              ...(held ? { details: { mayHaveRun: true } } : {}),
            },
          );
        // A lock you held before: the call only refreshed it, and it stays yours. A call stopped
        // before it went out took nothing.
        if (found.heldByMe || (call instanceof ConveneError && !call.mayHaveRun))
          throw stopped(false, waiting ? error.hint : undefined);
        // The asking and the release, one attempt each, within the grace the run has.
        const once = { maxRetries: 0, timeoutMs: GRACE_MS / 2 };
        let taken: boolean;
        try {
          taken = waiting
            ? (await space.artifacts.get(artifact.id, once)).lockedBy === found.saved.participantId
            : await space.artifacts.lock(artifact.id, { ...once, idempotencyKey: first }).then(
                () => true,
                (replayed: unknown) => {
                  // Someone else's: the call took nothing.
                  if (replayed instanceof LockedError) return false;
                  throw replayed;
                },
              );
          if (taken) await space.artifacts.unlock(artifact.id, once);
        } catch {
          throw stopped(true, mayBeHeld);
        }
        throw stopped(
          false,
          taken ? 'The lock its call took was released.' : waiting ? error.hint : undefined,
        );
      }
    },
    // Past the grace, the call (or the release) still out.
    found.heldByMe
      ? whateverTheLock
        ? Undone
        : 'You still hold the lock.'
      : whateverTheLock
        ? `${Undone} ${mayBeHeld}`
        : mayBeHeld,
  );
}

/** A 423 as lockedFailure explains it; anything else as it is. */
function explainedLock(error: unknown, about: LockContext, how?: LockWaiting): unknown {
  return error instanceof LockedError ? lockedFailure(error, about, how) : error;
}

/** What a 423's explanation says of waiting for the lock. */
interface LockWaiting {
  /** How long convene waited for the lock (`--wait`) before giving up. */
  waited?: string;
  /** The command takes `--wait`, which was not given: the hint offers it. */
  waitable?: boolean;
}

/** A 423 in words: who holds the lock and until when (exit 6), and what you can do about it. */
export function lockedFailure(
  error: LockedError,
  { artifactName, named, names, owner, ownerId, command, ownerCommand }: LockContext,
  { waited, waitable }: LockWaiting = {},
): CliError {
  const unlock = (owner ? command : ownerCommand)('artifact unlock', { args: [named] });
  const tail = command('tail');
  // The name the space's participants give, or the 423's own (someone who joined since they were read).
  const holder = error.lockedBy
    ? (names.get(error.lockedBy) ?? error.lockedByName ?? error.lockedBy)
    : undefined;
  const until = error.lockExpiresAt
    ? ` until ${when(error.lockExpiresAt)} (${relative(error.lockExpiresAt)})`
    : '';
  const after = waited ? `; waited ${waited}` : '';
  // Only a command that takes --wait offers it, and only when it was not given.
  const orWait = waitable ? ' Or wait for it here: run the same command with `--wait 5m`.' : '';
  return new CliError(
    holder
      ? `"${artifactName}" is locked by ${holder}${until}${after}`
      : `you do not hold the lock on "${artifactName}"${after}`,
    {
      exitCode: ExitCode.conflict,
      hint: holder
        ? !owner && error.lockedBy !== undefined && error.lockedBy === ownerId
          ? `The owner holds it: wait for them to finish (\`${tail}\` shows the unlock), or ask them to release it (\`${unlock}\` on their side).${orWait}`
          : owner
            ? `Wait for them to finish (\`${tail}\` shows the unlock), or release their lock yourself (you own the space) with \`${unlock}\`.${orWait}`
            : `Wait for them to finish (\`${tail}\` shows the unlock), or ask the owner to release it (\`${unlock}\`, run on their side).${orWait}`
        : `Take it with \`${command('artifact lock', { args: [named] })}\`.`,
      // The holder's name too, as the message says it.
      details: {
        lockedBy: error.lockedBy,
        ...(holder !== undefined && holder !== error.lockedBy ? { lockedByName: holder } : {}),
        lockExpiresAt: error.lockExpiresAt,
      },
      cause: error,
    },
  );
}

/** Runs `body`, turning a 423 into the holder's name and expiry. */
export async function explainingLocks<T>(about: LockContext, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    throw explainedLock(error, about);
  }
}

/** What findArtifact found: the space, the document's summary, and what a 423 is explained with. */
export type FoundArtifact = Awaited<ReturnType<typeof findArtifact>>;

/**
 * Writes `content` as the document's next version with `write` (a write, a restore) under its
 * lock: yours, if you hold it, else one taken for this write alone and released after (`write`
 * then gets its handle, and the answer no longer shows the lock). Once the lock is held, a
 * document that holds `content` already is left as it is: `changed` false, and the document as it
 * stands. A 423 is explained as `explainingLocks` does; with `waitMs` (`--wait`), someone else's
 * lock is waited for first, as `waitingForLock` waits.
 */
export async function writeUnlessSame(
  ctx: Context,
  found: FoundArtifact,
  content: string,
  write: (locked?: LockedArtifact, signal?: AbortSignal) => Promise<ArtifactView>,
  waitMs?: number,
): Promise<{ changed: boolean; doc: ReleasedArtifact }> {
  const named = found.lockContext.named;
  // Ctrl-C (SIGTERM, SIGHUP) ends the requests under way: withLock then releases the lock it
  // took (GRACE_MS at most), and what may have been written is said.
  const outcome = await interruptible(
    ctx,
    (signal) =>
      waitingForLock<ArtifactView | { same: ArtifactView }>(
        ctx,
        found.lockContext,
        found.heldByMe ? undefined : waitMs,
        (wait) =>
          found.heldByMe
            ? write(undefined, signal)
            : found.space.artifacts.withLock(
                found.artifact.id,
                async (locked) =>
                  // Saved meanwhile with this very text: nothing to write.
                  locked.content === content ? { same: locked.artifact } : write(locked, signal),
                { signal, ...wait },
              ),
      ),
    `${versionMaySaved(ctx)}${found.heldByMe ? '' : ` The lock taken for it may still be held: it lapses by itself, or \`${suggest(ctx, 'artifact unlock', { args: [named] })}\` releases it.`}`,
  ).catch((error: unknown) => {
    throw interruptedWrite(ctx, found, error) ?? error;
  });
  if ('same' in outcome) return { changed: false, doc: released(outcome.same) };
  // A lock taken for this write alone was released after it: its answer's lock is no more.
  return { changed: true, doc: found.heldByMe ? outcome : released(outcome) };
}

/**
 * A write stopped by Ctrl-C (SIGTERM, SIGHUP): once its own request went out, a version may have
 * been saved, and `artifact history` shows whether; before (taking the lock, reading the document
 * under it), nothing was written. Either way the lock withLock took is released first (or said by
 * the SDK to be held until it lapses); a release withLock could not confirm is said with until
 * when the lock may stay held. Undefined for any other failure.
 */
function interruptedWrite(ctx: Context, found: FoundArtifact, error: unknown): CliError | undefined {
  if (!ctx.signal.aborted) return undefined;
  const unreleased = error instanceof UnlockError ? error : undefined;
  const reason = unreleased?.outcome.status === 'rejected' ? unreleased.outcome.reason : error;
  if (!isAbort(reason)) return undefined;
  const stop = stoppedBy(ctx.signal);
  const held = unreleased
    ? ` The lock taken for it may stay held until ${when(unreleased.lockExpiresAt)}: \`${suggest(ctx, 'artifact unlock', { args: [found.lockContext.named] })}\` releases it.`
    : '';
  if (mayHaveWritten(reason)) {
    return new CliError(stop.said, {
      exitCode: stop.exitCode,
      hint: `${versionMaySaved(ctx)}${held}`,
      // Without its cause, which `explain` would say may have run a second time.
      details: { mayHaveRun: true },
    });
  }
  return new CliError(`${stop.said}: nothing was written to "${found.lockContext.artifactName}"`, {
    exitCode: stop.exitCode,
    ...(held ? { hint: held.trim() } : {}),
  });
}

/** Whether an aborted request may have saved a version: a write or a restore that went out. */
const mayHaveWritten = (error: unknown): boolean =>
  error instanceof ConveneError && savesAVersion(error) && error.mayHaveRun;

/**
 * What `artifact edit`, `write` and `restore` answer: the document with `changed` (whether a
 * version was saved) for `--json`, its version for `--quiet`, and `human` for people.
 */
export function reportWrite(
  out: Output,
  doc: { name: string; version: number },
  changed: boolean,
  human: () => void,
): void {
  out.result({ ...doc, changed }, { quiet: () => String(doc.version), human });
}

/** A document without the lock fields of a lock since released (see `released`). */
type ReleasedArtifact = Omit<ArtifactView, 'lockedBy' | 'lockedAt' | 'lockExpiresAt'>;

/**
 * A document as it stands after a command that took its lock only for one write and released it:
 * the write's answer without the lock fields it carried then (`lockedBy`, `lockedAt`,
 * `lockExpiresAt`), which a script reading `--json` would take for a lock still held.
 */
export function released(doc: ArtifactView): ReleasedArtifact {
  const { lockedBy: _by, lockedAt: _at, lockExpiresAt: _until, ...rest } = doc;
  return rest;
}
