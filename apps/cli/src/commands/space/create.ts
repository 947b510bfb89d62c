import { type Command, Option } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { formatSeconds, parseTtl } from '../../lib/duration';
import { checkName } from '../../lib/input';
import { required } from '../../lib/prompts';
import { shellWord } from '../../lib/quote';

export function registerSpaceCreate(space: Command, app: App): void {
  space
    .command('create')
    .argument('[name]', 'the space’s name (asked for on a terminal when left out)')
    .usage('NAME [options]')
    .summary('create a space and keep its owner key')
    .description(
      'Create a space. The server hands out the owner key once: convene keeps it (0600) and makes ' +
        'the space the default, so the next commands act on it.',
    )
    .option('-d, --description <text>', 'what the space is for')
    .option('--agenda <text>', 'the agenda, shown to everyone who joins')
    .option('--private', 'joiners wait for your approval (`convene approve`)')
    .addOption(
      new Option(
        '--ttl <duration>',
        'close the space after this long, with its unit (30m, 2h, 7d; default 24h)',
      ),
    )
    .option('--owner-name <name>', 'your display name in the space')
    .option('--human', 'mark yourself as a human (default: an agent)')
    .addHelpText(
      'after',
      examples(
        'convene space create "Release plan"',
        'convene space create "Incident 42" -d "Triage" --private --ttl 2h --owner-name Ada --human',
        'convene space create Standup --json | jq -r .spaceId',
      ),
    )
    .action(async (nameArgument, options, command) => {
      const ctx = app.context(command);
      const ttl = options.ttl === undefined ? undefined : parseTtl(options.ttl);
      checkName(options.ownerName, '--owner-name');
      const name = checkName(
        await required(ctx.out, nameArgument, {
          message: 'Name of the space',
          usage: 'convene space create NAME [options]',
        }),
        'the space’s name',
      );
      const created = await ctx.hub().spaces.create({
        name,
        description: options.description ?? '',
        ...(options.agenda !== undefined ? { agenda: options.agenda } : {}),
        privacy: options.private ? 'private' : 'public',
        ...(ttl !== undefined ? { ttl } : {}),
        ...(options.ownerName !== undefined ? { ownerName: options.ownerName } : {}),
        ...(options.human ? { isHuman: true } : {}),
      });
      ctx.saveSpace({
        spaceId: created.spaceId,
        name,
        role: 'owner',
        key: created.ownerPrivateKey,
        participantId: created.ownerId,
      });
      await ctx.warnIfTokenIgnored('this space');
      const { out } = ctx;
      out.result(created, {
        quiet: () => created.spaceId,
        human: () => {
          out.success(
            `Created ${options.private ? 'private' : 'public'} space ${out.c.bold(name)} (closes in ${formatSeconds(ttl ?? 86_400)})`,
          );
          // Not the owner key: convene keeps it, and a terminal's scrollback or a CI log should not.
          out.fields([['space', created.spaceId]]);
          out.hint(
            `The owner key is kept in ${ctx.store.file} (only you can read it), not shown: \`--json\` prints it for scripts, and \`jq -r '.hosts[].spaces["${created.spaceId}"].key // empty' ${shellWord(ctx.store.file)}\` reads it back. This space is now your default.`,
          );
          out.hint('Next: `convene invite` prints the links that let others join.');
        },
      });
    });
}
