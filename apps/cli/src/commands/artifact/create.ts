import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { readTextFile } from '../../lib/input';
import { required } from '../../lib/prompts';

export function registerArtifactCreate(artifact: Command, app: App): void {
  artifact
    .command('create')
    .argument('[name]', 'the document’s name')
    .usage('NAME [--file F] [options]')
    .summary('create a markdown document (empty, or from a file)')
    .option('-f, --file <file>', 'initial content from a file (`-` reads stdin)')
    .option('-s, --space <space>', 'name or id (default: the default space)')
    .addHelpText(
      'after',
      examples(
        'convene artifact create plan.md',
        'convene artifact create notes.md --file ./notes.md',
        'cat draft.md | convene artifact create draft.md --file -',
      ),
    )
    .action(async (nameArgument, options, command) => {
      const ctx = app.context(command);
      const name = await required(ctx.out, nameArgument, {
        message: 'Name of the document',
        usage: 'convene artifact create NAME [--file F]',
      });
      const saved = ctx.space(options.space);
      const content = options.file === undefined ? '' : await readTextFile(options.file);
      const doc = await ctx.spaceClient(saved).artifacts.create({ name, content });
      ctx.out.result(doc, {
        quiet: () => doc.id,
        human: () => {
          ctx.out.success(`Created ${ctx.out.c.bold(doc.name)} (version ${doc.version}) in ${saved.name}`);
          ctx.out.fields([['id', doc.id]]);
          ctx.out.hint(`Edit it with \`convene artifact edit ${JSON.stringify(doc.name)}\`.`);
        },
      });
    });
}
