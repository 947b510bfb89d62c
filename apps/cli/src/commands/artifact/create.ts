import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { documentNamed } from '../../lib/artifacts';
import { CliError } from '../../lib/errors';
import { ExitCode } from '../../lib/exit-codes';
import { checkName, readDocument } from '../../lib/input';
import { required } from '../../lib/prompts';
import { shellWord, verbatim } from '../../lib/quote';
import { sameName } from '../../lib/resolve';
import { suggest } from '../../lib/suggest';

export function registerArtifactCreate(artifact: Command, app: App): void {
  artifact
    .command('create')
    .argument('[name]', 'the document’s name')
    .usage('NAME [--file F | < F] [options]')
    .summary('create a markdown document (empty, or from a file or stdin)')
    .description(
      'Create a markdown document in the space, as version 1: with the content of a file (--file; ' +
        '`-` reads stdin), else of what is piped or redirected into stdin, else empty. At most 1 MiB. ' +
        'Names are unique in a space, in any case (exit 6 for a name taken).',
    )
    .option('-f, --file <file>', 'initial content from a file (`-` reads stdin; default: stdin when piped)')
    .option('-s, --space <space>', 'name or id (default: the default space)')
    .addHelpText(
      'after',
      examples(
        'convene artifact create plan.md',
        'convene artifact create notes.md --file ./notes.md',
        'cat draft.md | convene artifact create draft.md',
        'convene artifact create draft.md < draft.md',
      ),
    )
    .action(async (nameArgument, options, command) => {
      const ctx = app.context(command);
      const name = checkName(
        await required(ctx.out, nameArgument, {
          message: 'Name of the document',
          usage: 'convene artifact create NAME [--file F]',
        }),
        'the document’s name',
      );
      const saved = ctx.space(options.space);
      // The file first: a path that does not open is the first thing to report.
      const content = (await readDocument(options.file))?.content ?? '';
      const space = ctx.spaceClient(saved);
      // Documents are named as people type them (any case): a second of a name would make every
      // command given that name ask for an id instead.
      const { artifacts } = await ctx.readSpace(space);
      const existing = artifacts.find((a) => sameName(a.name, name));
      if (existing) {
        const doc = documentNamed(artifacts, existing);
        const file = verbatim(options.file === undefined ? 'F' : shellWord(options.file));
        throw new CliError(`${saved.name} already has a document called ${JSON.stringify(existing.name)}`, {
          exitCode: ExitCode.conflict,
          hint: `Edit it with \`${suggest(ctx, 'artifact edit', { args: [doc] })}\`, or replace its text with \`${suggest(ctx, 'artifact write', { args: [doc], options: { '--file': file } })}\`; or pick another name.`,
          details: { id: existing.id },
        });
      }
      const doc = await space.artifacts.create({ name, content });
      ctx.out.result(doc, {
        quiet: () => doc.id,
        human: () => {
          ctx.out.success(`Created ${ctx.out.c.bold(doc.name)} (version ${doc.version}) in ${saved.name}`);
          ctx.out.fields([['id', doc.id]]);
          // No other document had its name, in any case (above): the name names it alone.
          ctx.out.hint(`Edit it with \`${suggest(ctx, 'artifact edit', { args: [doc.name] })}\`.`);
        },
      });
    });
}
