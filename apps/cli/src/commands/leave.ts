import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../app';
import { isSpaceClosed } from '../lib/failure';
import { confirm } from '../lib/prompts';

export function registerLeave(program: Command, app: App): void {
  program
    .command('leave')
    .argument('[space]', 'name or id (default: the default space)')
    .summary('leave a space; your key stops working')
    .description(
      'Leave a space: your key stops working and convene forgets it. A space already closed (or ' +
        'past its time to live) is only forgotten here: its keys no longer work anywhere.',
    )
    .option('-y, --yes', 'do not ask for confirmation')
    .addHelpText('after', examples('convene leave', 'convene leave "Release plan" --yes'))
    .action(async (reference, options, command) => {
      const ctx = app.context(command);
      const saved = ctx.space(reference);
      await confirm(ctx.out, `Leave "${saved.name}"? Your key stops working.`, options.yes);
      let result: unknown;
      let closed = false;
      try {
        result = await ctx.spaceClient(saved).leave();
      } catch (error) {
        // Closing ended every membership already; what is left to do is to stop holding its key.
        if (!isSpaceClosed(error)) throw error;
        closed = true;
        result = { ok: true, closed: true };
      }
      ctx.forgetSpace(saved.spaceId);
      const { out } = ctx;
      out.result(result, {
        quiet: () => saved.spaceId,
        human: () =>
          closed
            ? out.success(
                `Forgot ${out.c.bold(saved.name)} here: it was already closed, so its keys no longer work anywhere`,
              )
            : out.success(`Left ${out.c.bold(saved.name)}`),
      });
    });
}
