import { type ArtifactView, LockedError } from '@convene/sdk';
import type { Context } from './context';
import { CliError } from './errors';
import { ExitCode } from './exit-codes';
import { choose } from './prompts';
import { quoted } from './quote';
import { relative, when } from './render';
import { pick } from './resolve';
import { suggest } from './suggest';

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
  const view = await space.get();
  ctx.refreshSpaceNames([view]);
  const reference = await choose(ctx.out, given, {
    message: 'Which document?',
    usage,
    items: view.artifacts,
    id: (a) => a.id,
    label: (a) => `${a.name} (v${a.version})`,
    none: () =>
      new CliError(`no documents in ${saved.name}`, {
        exitCode: ExitCode.notFound,
        hint: `Create one with \`${suggest(ctx, 'artifact create NAME')}\`.`,
      }),
  });
  const artifact = pick(view.artifacts, reference, {
    noun: 'document',
    id: (a) => a.id,
    name: (a) => a.name,
    listCommand: suggest(ctx, 'artifact list'),
  });
  ctx.artifact = artifact.name;
  const names = new Map(view.participants.map((p) => [p.participantId, p.name]));
  return {
    saved,
    space,
    artifact,
    names,
    heldByMe: artifact.lockedBy === saved.participantId,
    /** What a 423 is explained with: the holder's name, and whether you may force the lock. */
    lockContext: {
      artifactName: artifact.name,
      names,
      owner: saved.role === 'owner',
      ownerId: view.participants.find((p) => p.isOwner)?.participantId,
      command: (words: string) => suggest(ctx, words),
    },
  };
}

/** What explains a 423: the document, the participants' names, and whether you own the space. */
export interface LockContext {
  artifactName: string;
  names: ReadonlyMap<string, string>;
  /** The owner may release anyone's lock; a participant asks the owner to. */
  owner: boolean;
  /** The owner's participant id: a lock the owner holds is theirs to release, not to force. */
  ownerId?: string | undefined;
  /** The command line a hint suggests, on the document's space (`suggest`). */
  command: (words: string) => string;
}

/** A 423 in words: who holds the lock and until when (exit 6), and what you can do about it. */
export function lockedFailure(
  error: LockedError,
  { artifactName, names, owner, ownerId, command }: LockContext,
): CliError {
  const unlock = command(`artifact unlock ${quoted(artifactName)}`);
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
        : `Take it with \`${command(`artifact lock ${quoted(artifactName)}`)}\`.`,
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

/**
 * A document as it stands after a command that took its lock only for one write and released it:
 * the write's answer without the lock fields it carried then (`lockedBy`, `lockedAt`,
 * `lockExpiresAt`), which a script reading `--json` would take for a lock still held.
 */
export function released(doc: ArtifactView): Omit<ArtifactView, 'lockedBy' | 'lockedAt' | 'lockExpiresAt'> {
  const { lockedBy: _by, lockedAt: _at, lockExpiresAt: _until, ...rest } = doc;
  return rest;
}
