import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { explainingLocks, findArtifact } from '../../lib/artifacts';
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
        'Takes the lock for it unless you hold it already.',
    )
    .option('-s, --space <space>', 'name or id (default: the default space)')
    .addHelpText('after', examples('convene artifact restore plan.md 2'))
    .action(async (reference, versionArgument, options, command) => {
      const ctx = app.context(command);
      const usage = 'convene artifact restore ARTIFACT VERSION';
      checkVersion(versionArgument, 'VERSION');
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
      const doc = await explainingLocks(found.lockContext, () =>
        found.heldByMe
          ? space.artifacts.restore(summary.id, Number(version))
          : space.artifacts.withLock(summary.id, () => space.artifacts.restore(summary.id, Number(version))),
      );
      ctx.out.result(doc, {
        quiet: () => String(doc.version),
        human: () =>
          ctx.out.success(
            `Restored version ${version} of ${ctx.out.c.bold(doc.name)} as version ${doc.version}`,
          ),
      });
    });
}
