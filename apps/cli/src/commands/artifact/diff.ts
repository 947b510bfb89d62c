import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { findArtifact } from '../../lib/artifacts';
import { checkVersion } from '../../lib/input';
import type { Output } from '../../lib/output';
import { verbatim } from '../../lib/quote';
import { suggest } from '../../lib/suggest';

export function registerArtifactDiff(artifact: Command, app: App): void {
  artifact
    .command('diff')
    .argument('[artifact]', 'name or id (asked for on a terminal)')
    .argument('[from]', 'the older version (default: the one before TO)')
    .argument('[to]', 'the newer version (default: the latest)')
    .usage('ARTIFACT [FROM [TO]] [options]')
    .summary('a unified diff between two versions (default: the last change)')
    .description(
      'Print a unified diff between two versions of a document: FROM to TO, or what the last save changed when no version is given. Every version is kept (`convene artifact history`).',
    )
    .option('-s, --space <space>', 'name or id (default: the default space)')
    .addHelpText(
      'after',
      examples(
        '# what the last save changed',
        'convene artifact diff plan.md',
        'convene artifact diff plan.md 1 2',
        'convene artifact diff plan.md 2 | less',
      ),
    )
    .action(async (reference, fromArgument, toArgument, options, command) => {
      const ctx = app.context(command);
      checkVersion(fromArgument, 'FROM', { artifact: reference, command: 'artifact diff' });
      checkVersion(toArgument, 'TO');
      const found = await findArtifact(
        ctx,
        options.space,
        reference,
        'convene artifact diff ARTIFACT [FROM [TO]]',
      );
      const to = toArgument === undefined ? found.artifact.version : Number(toArgument);
      const from = fromArgument === undefined ? to - 1 : Number(fromArgument);
      if (from < 1) {
        // Version 1 is where every document starts: nothing came before it (`from` null).
        if (ctx.out.mode.json) ctx.out.json({ id: found.artifact.id, from: null, to, diff: '' });
        else
          ctx.out.info(
            `Version 1 is the first of ${JSON.stringify(found.artifact.name)}: there is nothing before it to compare with. ` +
              `\`${suggest(ctx, 'artifact show', { args: [found.named], options: to === found.artifact.version ? {} : { '--at': verbatim(to) } })}\` shows it.`,
          );
        return;
      }
      const diff = await found.space.artifacts.diff(found.artifact.id, from, to);
      if (ctx.out.mode.json) ctx.out.json({ id: found.artifact.id, from, to, diff });
      else if (diff === '') {
        // Not an empty line: say why there is nothing to show.
        const name = JSON.stringify(found.artifact.name);
        ctx.out.info(
          from === to
            ? `Nothing to compare: FROM and TO are both version ${from} of ${name}.`
            : `Versions ${from} and ${to} of ${name} are the same text.`,
        );
      } else printDiff(ctx.out, diff);
    });
}

function printDiff(out: Output, diff: string): void {
  for (const line of diff.replace(/\n$/, '').split('\n')) {
    if (line.startsWith('+++') || line.startsWith('---')) out.line(out.c.bold(line));
    else if (line.startsWith('+')) out.line(out.c.green(line));
    else if (line.startsWith('-')) out.line(out.c.red(line));
    else if (line.startsWith('@@')) out.line(out.c.cyan(line));
    else out.line(line);
  }
}
