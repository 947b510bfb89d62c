import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { confirm, requireSpaceOrYes } from '../../lib/prompts';

export function registerSpaceClose(space: Command, app: App): void {
  space
    .command('close')
    .argument(
      '[space]',
      'name or id (default: the default space, after confirming; elsewhere only with --yes)',
    )
    .usage('[SPACE] [options]')
    .summary('close a space for good (owner)')
    .description(
      'Close a space for good: every key stops working and open streams end. On a terminal it asks ' +
        'first, and SPACE defaults to the default space; elsewhere nobody is asked, so name the ' +
        'space, or give --yes alone to close the default space.',
    )
    .option('-y, --yes', 'do not ask for confirmation')
    .addHelpText(
      'after',
      examples(
        'convene space close "Release plan"',
        'convene space close 3f2e… --yes',
        'convene space close --yes',
      ),
    )
    .action(async (reference, options, command) => {
      const ctx = app.context(command);
      requireSpaceOrYes(ctx.out, reference, options.yes, { verb: 'close', command: 'convene space close' });
      const saved = ctx.space(reference);
      ctx.requireOwner(saved, 'close it');
      await confirm(ctx.out, `Close "${saved.name}" for good? Every key stops working.`, options.yes);
      const result = await ctx.spaceClient(saved).close();
      ctx.forgetSpace(saved.spaceId);
      ctx.out.result(result, {
        quiet: () => saved.spaceId,
        human: () => ctx.out.success(`Closed ${ctx.out.c.bold(saved.name)}; its keys no longer work`),
      });
    });
}
