import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { findArtifact } from '../../lib/artifacts';
import { checkVersion } from '../../lib/input';
import { inline } from '../../lib/output';
import { relative } from '../../lib/render';

export function registerArtifactShow(artifact: Command, app: App): void {
  artifact
    .command('show')
    .argument('[artifact]', 'name or id (asked for on a terminal)')
    .usage('ARTIFACT [options]')
    .summary('a document: its details and content')
    .description(
      'Show a document: its version, who saved it last and when, who holds its edit lock, and its content; ' +
        'with --at N, version N as it was saved (`artifact history` lists them).',
    )
    .option('--at <version>', 'an earlier version (1, 2, …) instead of the latest')
    .option('-s, --space <space>', 'name or id (default: the default space)')
    .addHelpText(
      'after',
      examples(
        'convene artifact show plan.md',
        'convene artifact show plan.md --at 2',
        'convene artifact show plan.md --json | jq .version',
      ),
    )
    .action(async (reference, options, command) => {
      const ctx = app.context(command);
      checkVersion(options.at, '--at');
      const found = await findArtifact(ctx, options.space, reference, 'convene artifact show ARTIFACT');
      const doc =
        options.at === undefined
          ? await found.space.artifacts.get(found.artifact.id)
          : await found.space.artifacts.version(found.artifact.id, Number(options.at));
      const { out } = ctx;
      out.result(doc, {
        quiet: () => doc.id,
        human: () => {
          const holder = doc.lockedBy ? inline(found.names.get(doc.lockedBy) ?? doc.lockedBy) : undefined;
          out.fields([
            ['name', out.c.bold(inline(doc.name))],
            ['id', doc.id],
            [
              'version',
              `${doc.version}${doc.version === found.artifact.version ? '' : ` (the latest is ${found.artifact.version})`}, updated ${relative(doc.updatedAt)} by ${inline(found.names.get(doc.updatedBy) ?? doc.updatedBy)}`,
            ],
            [
              'lock',
              holder
                ? `${holder}${doc.lockExpiresAt ? `, lapses ${relative(doc.lockExpiresAt)}` : ''}`
                : undefined,
            ],
          ]);
          out.line();
          out.text(doc.content);
        },
      });
    });
}
