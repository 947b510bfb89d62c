import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import {
  explainingLocks,
  findArtifact,
  LOCK_WAIT_OPTION,
  parseLockWait,
  takeLock,
} from '../../lib/artifacts';
import { inline } from '../../lib/output';
import { confirm } from '../../lib/prompts';
import { verbatim } from '../../lib/quote';
import { relative, when } from '../../lib/render';
import { suggest } from '../../lib/suggest';

export function registerArtifactLock(artifact: Command, app: App): void {
  artifact
    .command('lock')
    .argument('[artifact]', 'name or id (asked for on a terminal)')
    .usage('ARTIFACT [options]')
    .summary('take the edit lock (others cannot write until you unlock)')
    .description(
      'Take the exclusive edit lock of a document, or refresh it if you hold it. It lapses after ' +
        'the server’s lock lifetime (10 minutes by default) unless you write or lock again. If someone ' +
        'else holds it, it says who and until when (exit 6), or with --wait waits for them to finish. ' +
        'Says the version it holds the document at (--json: "version"): write with --base-version ' +
        'that version, and a write after the lock lapsed and someone else saved is refused.',
    )
    .option('-s, --space <space>', 'name or id (default: the default space)')
    .option(...LOCK_WAIT_OPTION)
    .addHelpText(
      'after',
      examples(
        'convene artifact lock plan.md',
        'convene artifact lock plan.md --wait 10m',
        'convene artifact lock plan.md --json',
      ),
    )
    .action(async (reference, options, command) => {
      const ctx = app.context(command);
      const waitMs = parseLockWait(options.wait);
      const found = await findArtifact(ctx, options.space, reference, 'convene artifact lock ARTIFACT');
      // Stopped while a lock call is out, a lock it may have taken is released (or said maybe held).
      const lock = await takeLock(ctx, found, waitMs, {
        undone: found.heldByMe ? 'you still hold the lock' : 'nothing was locked',
        whateverTheLock: found.heldByMe,
      });
      // The version the lock holds the document at (read after it: a --wait may have seen its
      // holder save another). The write the hint suggests goes over that one only: should the lock
      // lapse (a long pause) and someone save meanwhile, it is refused rather than replacing their
      // text unseen. A read that fails leaves it out: the lock is taken all the same.
      // (The space's view: its documents' summaries, where the list would carry every text.)
      const version = await ctx
        .readSpace(found.space)
        .then(({ artifacts }) => artifacts.find((a) => a.id === found.artifact.id)?.version)
        .catch(() => undefined);
      // Which document, for a script that locks several: as `unlock --json` and `show --json` say it.
      const named = { id: found.artifact.id, name: found.artifact.name, ...lock };
      ctx.out.result(version === undefined ? named : { ...named, version }, {
        quiet: () => lock.lockExpiresAt,
        human: () => {
          ctx.out.success(
            `Locked ${ctx.out.c.bold(found.artifact.name)}${version === undefined ? '' : ` at version ${version}`} until ${when(lock.lockExpiresAt)} (${relative(lock.lockExpiresAt)})`,
          );
          const write = suggest(ctx, 'artifact write', {
            args: [found.named],
            options: {
              '--file': verbatim('F'),
              ...(version === undefined ? {} : { '--base-version': verbatim(version) }),
            },
          });
          ctx.out.hint(
            `Write with \`${write}\`${version === undefined ? '' : ' (refused, should your lock lapse and someone save another version meanwhile)'}; release with \`${suggest(ctx, 'artifact unlock', { args: [found.named] })}\`.`,
          );
        },
      });
    });
}

export function registerArtifactUnlock(artifact: Command, app: App): void {
  artifact
    .command('unlock')
    .argument('[artifact]', 'name or id (asked for on a terminal)')
    .usage('ARTIFACT [options]')
    .summary('release the lock (the owner can release anyone’s)')
    .description(
      'Release the edit lock of a document you hold; the space’s owner can release anyone’s. A ' +
        'document nobody has locked is left as it is (exit 0). Before the owner releases someone ' +
        'else’s lock, a terminal asks first (--yes does not): their edit may then fail to save.',
    )
    .option('-s, --space <space>', 'name or id (default: the default space)')
    .option('-y, --yes', 'do not ask before releasing someone else’s lock')
    .addHelpText(
      'after',
      examples(
        'convene artifact unlock plan.md',
        'convene artifact unlock plan.md --space "Release plan" --yes',
      ),
    )
    .action(async (reference, options, command) => {
      const ctx = app.context(command);
      const found = await findArtifact(ctx, options.space, reference, 'convene artifact unlock ARTIFACT');
      const { lockedBy, lockExpiresAt } = found.artifact;
      // The owner forcing someone else's lock that has not lapsed: an edit they have open under it
      // would fail to save.
      if (
        found.saved.role === 'owner' &&
        lockedBy !== undefined &&
        !found.heldByMe &&
        (lockExpiresAt === undefined || new Date(lockExpiresAt).getTime() > Date.now())
      ) {
        const holder = inline(found.names.get(lockedBy) ?? lockedBy);
        await confirm(
          ctx.out,
          `Release ${holder}’s lock on ${inline(found.artifact.name)}? An edit they have open may then fail to save.`,
          options.yes,
        );
      }
      const doc = await explainingLocks(found.lockContext, () =>
        found.space.artifacts.unlock(found.artifact.id),
      );
      const holder = found.artifact.lockedBy;
      const name = ctx.out.c.bold(doc.name);
      // Unlocking what nobody holds changes nothing (exit 0, as the server answers): said as such.
      ctx.out.result(
        { ...doc, wasLocked: holder !== undefined },
        {
          quiet: () => doc.id,
          human: () =>
            holder === undefined
              ? ctx.out.info(
                  `${name} was not locked (if you held a lock on it, it had lapsed or was released); nothing to release.`,
                )
              : ctx.out.success(
                  holder !== found.saved.participantId
                    ? `Released ${found.names.get(holder) ?? holder}’s lock on ${name}`
                    : `Unlocked ${name}`,
                ),
        },
      );
    });
}
