import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { findArtifact } from '../../lib/artifacts';
import { relative } from '../../lib/render';

export function registerArtifactHistory(artifact: Command, app: App): void {
  artifact
    .command('history')
    .argument('[artifact]', 'name or id (asked for on a terminal)')
    .usage('ARTIFACT [options]')
    .summary('the versions of a document, newest first')
    .description(
      'List the versions of a document, newest first: who saved each, when, and its size. `convene artifact diff` compares two, `convene artifact restore` saves an old one again.',
    )
    .option('-s, --space <space>', 'name or id (default: the default space)')
    .addHelpText(
      'after',
      examples('convene artifact history plan.md', 'convene artifact history plan.md --json'),
    )
    .action(async (reference, options, command) => {
      const ctx = app.context(command);
      const found = await findArtifact(ctx, options.space, reference, 'convene artifact history ARTIFACT');
      const { versions } = await found.space.artifacts.history(found.artifact.id);
      const { out } = ctx;
      out.result(versions, {
        quiet: () => versions.map((v) => String(v.version)).join('\n') || undefined,
        human: () =>
          out.table(
            versions,
            [
              { header: 'version', value: (v) => String(v.version), style: (t) => out.c.bold(t) },
              { header: 'by', value: (v) => found.names.get(v.updatedBy) ?? v.updatedBy },
              { header: 'when', value: (v) => relative(v.updatedAt) },
              { header: 'bytes', value: (v) => String(v.size) },
            ],
            'No versions.',
          ),
      });
    });
}
