import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import {
  findArtifact,
  LOCK_WAIT_OPTION,
  parseLockWait,
  reportWrite,
  writeUnlessSame,
} from '../../lib/artifacts';
import { CliError } from '../../lib/errors';
import { ExitCode } from '../../lib/exit-codes';
import { checkVersion } from '../../lib/input';
import { choose } from '../../lib/prompts';
import { relative } from '../../lib/render';

export function registerArtifactRestore(artifact: Command, app: App): void {
  artifact
    .command('restore')
    .argument('[artifact]', 'name or id (asked for on a terminal)')
    .argument('[version]', 'the version to bring back (picked from the history on a terminal)')
    .usage('ARTIFACT VERSION [options]')
    .summary('save an earlier version again as the newest')
    .description(
      'Write the content of an earlier version as a new version (history is never rewritten). ' +
        'Takes the lock for it and releases it after, unless you hold it already (then keeps it). ' +
        'Restoring the text the document holds already (its latest version, or one of the same ' +
        'text) writes nothing (said so, exit 0; --json: "changed": false). If someone else holds ' +
        'the lock, it says who and until when (exit 6), or with --wait waits for them to finish.',
    )
    .option('-s, --space <space>', 'name or id (default: the default space)')
    .option(...LOCK_WAIT_OPTION)
    .addHelpText(
      'after',
      examples('convene artifact restore plan.md 2', 'convene artifact restore plan.md 2 --wait 5m'),
    )
    .action(async (reference, versionArgument, options, command) => {
      const ctx = app.context(command);
      const usage = 'convene artifact restore ARTIFACT VERSION';
      checkVersion(versionArgument, 'VERSION', { artifact: reference, command: 'artifact restore' });
      const waitMs = parseLockWait(options.wait);
      const found = await findArtifact(ctx, options.space, reference, usage);
      const { space, artifact: summary } = found;
      const version =
        versionArgument ??
        (await choose(ctx.out, undefined, {
          message: `Which version of ${summary.name}?`,
          usage,
          // Not the latest: restoring it would change nothing.
          items: ctx.out.mode.interactive
            ? (
                await space.artifacts.history(summary.id)
              ).versions.filter((v) => v.version !== summary.version)
            : [],
          id: (v) => String(v.version),
          none: () =>
            new CliError(`${summary.name} has only one version: nothing earlier to restore`, {
              exitCode: ExitCode.notFound,
            }),
          label: (v) =>
            `version ${v.version}, ${relative(v.updatedAt)} by ${found.names.get(v.updatedBy) ?? v.updatedBy}`,
        }));
      const target = Number(version);
      // Read before any lock is taken, as `write` does: restoring the text the document holds
      // already (its latest version, or an earlier one of the same text) writes nothing, and a
      // version that is none is said without a lock taken and released in everyone's `tail`.
      const current = await space.artifacts.get(summary.id);
      // Said so, exit 0, as `artifact edit` says it of a text left unchanged; --json: the document
      // as it is, with "changed": false.
      const unchanged = (doc: { name: string; version: number }) =>
        reportWrite(ctx.out, doc, false, () =>
          ctx.out.info(
            `${
              doc.version === target
                ? `Version ${target} is the latest of ${ctx.out.c.bold(doc.name)} already`
                : `Version ${target} of ${ctx.out.c.bold(doc.name)} is the same text as the latest, version ${doc.version}`
            }; nothing written.`,
          ),
        );
      if (target === current.version) return unchanged(current);
      const earlier = await space.artifacts.version(summary.id, target);
      if (earlier.content === current.content) return unchanged(current);
      const { changed, doc } = await writeUnlessSame(
        ctx,
        found,
        earlier.content,
        (_locked, signal) => space.artifacts.restore(summary.id, target, signal ? { signal } : undefined),
        waitMs,
      );
      if (!changed) return unchanged(doc);
      reportWrite(ctx.out, doc, true, () =>
        ctx.out.success(
          `Restored version ${target} of ${ctx.out.c.bold(doc.name)} as version ${doc.version}`,
        ),
      );
    });
}
