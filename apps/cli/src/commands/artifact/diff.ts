import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { findArtifact } from '../../lib/artifacts';
import { UsageError } from '../../lib/errors';
import type { Output } from '../../lib/output';

export function registerArtifactDiff(artifact: Command, app: App): void {
  artifact
    .command('diff')
    .argument('<artifact>', 'name or id')
    .argument('<from>', 'the older version number')
    .argument('<to>', 'the newer version number')
    .usage('ARTIFACT FROM TO [options]')
    .summary('a unified diff between two versions')
    .option('-s, --space <space>', 'name or id (default: the default space)')
    .addHelpText(
      'after',
      examples('convene artifact diff plan.md 1 2', 'convene artifact diff plan.md 2 5 | less'),
    )
    .action(async (reference, from, to, options, command) => {
      const ctx = app.context(command);
      for (const [label, value] of [
        ['FROM', from],
        ['TO', to],
      ] as const) {
        if (!/^[1-9]\d*$/.test(value))
          throw new UsageError(`${label} must be a version number (1, 2, …), not "${value}"`);
      }
      const found = await findArtifact(
        ctx,
        options.space,
        reference,
        'convene artifact diff ARTIFACT FROM TO',
      );
      const diff = await found.space.artifacts.diff(found.artifact.id, Number(from), Number(to));
      if (ctx.out.mode.json)
        ctx.out.json({ id: found.artifact.id, from: Number(from), to: Number(to), diff });
      else printDiff(ctx.out, diff);
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
