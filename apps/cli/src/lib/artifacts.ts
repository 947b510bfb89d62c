import { type ArtifactView, type LockedArtifact, LockedError } from '@convene/sdk';
import type { Context } from './context';
import { CliError } from './errors';
import { ExitCode } from './exit-codes';
import type { Output } from './output';
import { choose } from './prompts';
import { type Value, verbatim } from './quote';
import { relative, when } from './render';
import { find, hintName, pick } from './resolve';
import { type LineParts, suggest } from './suggest';

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
}

/** A 423 in words: who holds the lock and until when (exit 6), and what you can do about it. */
export function lockedFailure(
  error: LockedError,
  { artifactName, named, names, owner, ownerId, command }: LockContext,
): CliError {
  const unlock = command('artifact unlock', { args: [named] });
  const tail = command('tail');
  const holder = error.lockedBy ? (names.get(error.lockedBy) ?? error.lockedBy) : undefined;
  const until = error.lockExpiresAt
    ? ` until ${when(error.lockExpiresAt)} (${relative(error.lockExpiresAt)})`
    : '';
  return new CliError(
    holder
      ? `"${artifactName}" is locked by ${holder}${until}`
      : `you do not hold the lock on "${artifactName}"`,
    {
      exitCode: ExitCode.conflict,
      hint: holder
        ? !owner && error.lockedBy !== undefined && error.lockedBy === ownerId
          ? `The owner holds it: wait for them to finish (\`${tail}\` shows the unlock), or ask them to release it (\`${unlock}\` on their side).`
          : `Wait for them to finish (\`${tail}\` shows the unlock), or ${
              owner
                ? 'release their lock yourself (you own the space) with'
                : 'ask the owner to force it with'
            } \`${unlock}\`.`
        : `Take it with \`${command('artifact lock', { args: [named] })}\`.`,
      details: { lockedBy: error.lockedBy, lockExpiresAt: error.lockExpiresAt },
      cause: error,
    },
  );
}

/** Runs `body`, turning a 423 into the holder's name and expiry. */
export async function explainingLocks<T>(about: LockContext, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof LockedError) throw lockedFailure(error, about);
    throw error;
  }
}

/** What findArtifact found: the space, the document's summary, and what a 423 is explained with. */
export type FoundArtifact = Awaited<ReturnType<typeof findArtifact>>;

/**
 * Writes `content` as the document's next version with `write` (a write, a restore) under its
 * lock: yours, if you hold it, else one taken for this write alone and released after (`write`
 * then gets its handle, and the answer no longer shows the lock). Once the lock is held, a
 * document that holds `content` already is left as it is: `changed` false, and the document as it
 * stands. A 423 is explained as `explainingLocks` does.
 */
export async function writeUnlessSame(
  found: FoundArtifact,
  content: string,
  write: (locked?: LockedArtifact) => Promise<ArtifactView>,
): Promise<{ changed: boolean; doc: ReleasedArtifact }> {
  const outcome = await explainingLocks<ArtifactView | { same: ArtifactView }>(found.lockContext, () =>
    found.heldByMe
      ? write()
      : found.space.artifacts.withLock(found.artifact.id, async (locked) =>
          // Saved meanwhile with this very text: nothing to write.
          locked.content === content ? { same: locked.artifact } : write(locked),
        ),
  );
  if ('same' in outcome) return { changed: false, doc: released(outcome.same) };
  // A lock taken for this write alone was released after it: its answer's lock is no more.
  return { changed: true, doc: found.heldByMe ? outcome : released(outcome) };
}

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
