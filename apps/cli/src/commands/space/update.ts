import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { UsageError } from '../../lib/errors';
import { checkName, spaceNamed } from '../../lib/input';

export function registerSpaceUpdate(space: Command, app: App): void {
  space
    .command('update')
    .argument('[space]', 'name or id (default: the default space)')
    .option('-s, --space <space>', 'name or id, as SPACE')
    .usage('[SPACE] [options]')
    .summary('change the name, description or agenda (owner)')
    .description(
      'Change a space’s name, description or agenda. Only the owner can; what is not given stays as it is.',
    )
    .option('--name <name>', 'the new name')
    .option('-d, --description <text>', 'the new description')
    .option('--agenda <text>', 'the new agenda')
    .addHelpText(
      'after',
      examples(
        'convene space update --agenda "1. scope 2. dates 3. owners"',
        'convene space update Standup --name Retro',
      ),
    )
    .action(async (argument, options, command) => {
      const ctx = app.context(command);
      const reference = spaceNamed(argument, options.space, 'convene space update');
      checkName(options.name, '--name');
      const changes = {
        ...(options.name !== undefined ? { name: options.name } : {}),
        ...(options.description !== undefined ? { description: options.description } : {}),
        ...(options.agenda !== undefined ? { agenda: options.agenda } : {}),
      };
      if (Object.keys(changes).length === 0) {
        throw new UsageError('nothing to change', 'Pass --name, --description or --agenda.');
      }
      const saved = ctx.space(reference);
      await ctx.requireOwner(saved, 'update it');
      const result = await ctx.spaceClient(saved).update(changes);
      if (changes.name !== undefined) {
        ctx.store.updateHost(ctx.url, (host) => {
          const entry = host.spaces[saved.spaceId];
          if (entry) entry.name = changes.name!;
        });
      }
      // Which space changed, by the name it had: the default space is easily not the one meant.
      const others = Object.keys(changes).filter((field) => field !== 'name');
      const said =
        changes.name !== undefined
          ? `Renamed ${saved.name} to ${changes.name}${others.length ? `, and updated its ${others.join(' and ')}` : ''}`
          : `Updated ${others.join(' and ')} of ${saved.name}`;
      ctx.out.result(result, { quiet: () => saved.spaceId, human: () => ctx.out.success(said) });
    });
}
