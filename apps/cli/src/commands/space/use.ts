import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { required } from '../../lib/prompts';

export function registerSpaceUse(space: Command, app: App): void {
  space
    .command('use')
    .argument('[space]', 'name or id of a space you hold a key for')
    .usage('SPACE')
    .summary('make a space the default')
    .addHelpText('after', examples('convene space use "Release plan"', 'convene space use 3f2e'))
    .action(async (reference, _options, command) => {
      const ctx = app.context(command);
      const name = await required(ctx.out, reference, {
        message: 'Space (name or id)',
        usage: 'convene space use SPACE',
      });
      const saved = ctx.space(name);
      ctx.store.updateHost(ctx.url, (host) => {
        host.defaultSpace = saved.spaceId;
      });
      ctx.out.result(
        { spaceId: saved.spaceId, name: saved.name, role: saved.role, participantId: saved.participantId },
        {
          quiet: () => saved.spaceId,
          human: () =>
            ctx.out.success(`Default space is now ${ctx.out.c.bold(saved.name)} (${saved.spaceId})`),
        },
      );
    });
}
