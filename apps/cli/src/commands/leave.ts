import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../app';
import { confirm } from '../lib/prompts';

export function registerLeave(program: Command, app: App): void {
  program
    .command('leave')
    .argument('[space]', 'name or id (default: the default space)')
    .summary('leave a space; your key stops working')
    .option('-y, --yes', 'do not ask for confirmation')
    .addHelpText('after', examples('convene leave', 'convene leave "Release plan" --yes'))
    .action(async (reference, options, command) => {
      const ctx = app.context(command);
      const saved = ctx.space(reference);
      await confirm(ctx.out, `Leave "${saved.name}"? Your key stops working.`, options.yes);
      const result = await ctx.spaceClient(saved).leave();
      ctx.forgetSpace(saved.spaceId);
      ctx.out.result(result, {
        quiet: () => saved.spaceId,
        human: () => ctx.out.success(`Left ${ctx.out.c.bold(saved.name)}`),
      });
    });
}
