import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { explainingLocks, findArtifact } from '../../lib/artifacts';
import { UsageError } from '../../lib/errors';

export function registerArtifactRestore(artifact: Command, app: App): void {
  artifact
    .command('restore')
    .argument('<artifact>', 'name or id')
    .argument('<version>', 'the version to bring back')
    .usage('ARTIFACT VERSION [options]')
    .summary('save an earlier version again as the newest')
    .description(
      'Write the content of an earlier version as a new version (history is never rewritten). ' +
        'Takes the lock for it unless you hold it already.',
    )
    .option('-s, --space <space>', 'name or id (default: the default space)')
    .addHelpText('after', examples('convene artifact restore plan.md 2'))
    .action(async (reference, version, options, command) => {
      const ctx = app.context(command);
      if (!/^[1-9]\d*$/.test(version))
        throw new UsageError(`VERSION must be a version number, not "${version}"`);
      const found = await findArtifact(
        ctx,
        options.space,
        reference,
        'convene artifact restore ARTIFACT VERSION',
      );
      const { space, artifact: summary } = found;
      const doc = await explainingLocks(summary.name, found.names, () =>
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
