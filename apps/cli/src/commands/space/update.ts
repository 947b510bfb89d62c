import type { Command } from '@commander-js/extra-typings';
import { ConveneError } from '@convene/sdk';
import { type App, examples } from '../../app';
import { UsageError } from '../../lib/errors';
import { explained } from '../../lib/failure';
import { checkName, spaceNamed } from '../../lib/input';
import { inline } from '../../lib/output';
import { namesakesOf, namesakesWarning } from '../../lib/suggest';

export function registerSpaceUpdate(space: Command, app: App): void {
  space
    .command('update')
    .argument('[space]', 'name or id (default: the default space)')
    .option('-s, --space <space>', 'name or id, as SPACE')
    .usage('[SPACE] [options]')
    .summary('change the name, description, agenda or message budget (owner)')
    .description(
      'Change a space’s name, description or agenda, or the budget against runaway senders: ' +
        '--max-messages-per-minute N lets each participant (you included) send at most N messages ' +
        'a minute, beyond which their sends are refused (429, for that sender only) until the ' +
        'minute is over; `none` removes it. Only the owner can; what is not given stays as it is. ' +
        'With --json, the space as it is after the update (what `space show --json` prints); should ' +
        'reading it fail, the update\'s own answer ({"ok": true}, with the spaceId and the fields set) and a warning: it is done all the same.',
    )
    .option('--name <name>', 'the new name')
    .option('-d, --description <text>', 'the new description')
    .option('--agenda <text>', 'the new agenda')
    .option('--max-messages-per-minute <n>', 'each participant’s budget, 1 to 10000, or none')
    .addHelpText(
      'after',
      examples(
        'convene space update --agenda "1. scope 2. dates 3. owners"',
        'convene space update Standup --name Retro',
        'convene space update --max-messages-per-minute 30',
      ),
    )
    .action(async (argument, options, command) => {
      const ctx = app.context(command);
      const reference = spaceNamed(ctx, argument, options.space, 'convene space update');
      checkName(options.name, '--name');
      const budget = parseBudget(options.maxMessagesPerMinute);
      const changes = {
        ...(options.name !== undefined ? { name: options.name } : {}),
        ...(options.description !== undefined ? { description: options.description } : {}),
        ...(options.agenda !== undefined ? { agenda: options.agenda } : {}),
        ...(budget !== undefined ? { maxMessagesPerMinute: budget } : {}),
      };
      if (Object.keys(changes).length === 0) {
        throw new UsageError(
          'nothing to change',
          'Pass --name, --description, --agenda or --max-messages-per-minute.',
        );
      }
      const saved = ctx.space(reference);
      await ctx.requireOwner(saved, 'update it');
      // The name it had, for what is said: reading the space below renames what the command holds.
      const was = saved.name;
      const client = ctx.spaceClient(saved);
      await client.update(changes);
      const renamed = changes.name;
      if (renamed !== undefined) {
        /** The other spaces saved here that the new name is also the name of. */
        let namesakes: string[] = [];
        ctx.store.updateHost(ctx.url, (host) => {
          const entry = host.spaces[saved.spaceId];
          if (entry) entry.name = renamed;
          namesakes = namesakesOf(host, renamed, saved.spaceId);
        });
        // As `space create` says it: a name shared here is a name commands no longer find by.
        if (namesakes.length > 0) ctx.out.warn(namesakesWarning(ctx, renamed, [...namesakes, renamed]));
      }
      // The server answers an update with `ok` alone: --json prints the space as it is now (what
      // `space show --json` prints), read once the update is done, so a script sees what it set
      // and what it did not, without a second command. A read that fails does not make the update
      // fail: it is done, and --json prints the update's own answer, with a warning.
      const view = ctx.out.mode.json
        ? await ctx.readSpace(client).catch((error: unknown) => {
            if (!(error instanceof ConveneError)) throw error;
            ctx.out.warn(
              `updated ${inline(changes.name ?? was)}, but could not read it back: ${explained(error, ctx).message} (\`convene space show\` shows it)`,
            );
            // The update's answer, with what it set: a script still reads the fields it gave.
            return { ok: true, spaceId: saved.spaceId, ...changes };
          })
        : undefined;
      // Which space changed, by the name it had: the default space is easily not the one meant.
      const others = Object.keys(changes)
        .filter((field) => field !== 'name')
        .map((field) => (field === 'maxMessagesPerMinute' ? 'message budget' : field));
      const said =
        changes.name !== undefined
          ? `Renamed ${was} to ${changes.name}${others.length ? `, and updated its ${others.join(' and ')}` : ''}`
          : `Updated ${others.join(' and ')} of ${was}`;
      ctx.out.result(view, { quiet: () => saved.spaceId, human: () => ctx.out.success(said) });
    });
}

/** `--max-messages-per-minute`: 1 to 10,000, or `none` (null: the budget removed). */
function parseBudget(value: string | undefined): number | null | undefined {
  if (value === undefined) return undefined;
  if (value.toLowerCase() === 'none') return null;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 10_000)
    throw new UsageError(
      `--max-messages-per-minute must be a whole number from 1 to 10000, or none, not "${value}"`,
    );
  return Number(value);
}
