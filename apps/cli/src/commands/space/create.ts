import { type Command, Option } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { commandLine } from '../../lib/command-line';
import { rememberedServer } from '../../lib/context';
import { formatSeconds, parseTtl } from '../../lib/duration';
import { spaceMayExist } from '../../lib/failure';
import { checkName } from '../../lib/input';
import { interruptible } from '../../lib/interrupt';
import { checkedAnswer, ZAnswers } from '../../lib/not-convene';
import { inline } from '../../lib/output';
import { required } from '../../lib/prompts';
import { verbatim } from '../../lib/quote';
import { youAre } from '../../lib/render';
import type { StoredSpace } from '../../lib/store';
import { namesakesOf, namesakesWarning } from '../../lib/suggest';

export function registerSpaceCreate(space: Command, app: App): void {
  space
    .command('create')
    .argument('[name]', 'the space’s name (asked for on a terminal when left out)')
    .usage('NAME [options]')
    .summary('create a space and keep its owner key')
    .description(
      'Create a space. The server hands out the owner key once: convene keeps it (0600) and makes ' +
        'the space the default, so the next commands act on it (`convene space use` switches back). ' +
        'Others see you as --owner-name (default "Owner"), with --owner-role (default "owner"), and ' +
        'as an agent unless --human.',
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
    .option('--owner-name <name>', 'your display name in the space (default: Owner)')
    .option('--owner-role <role>', 'your role in the space, a free-text label (default: owner)')
    .option('--human', 'mark yourself as a human (default: an agent)')
    .addHelpText(
      'after',
      examples(
        'convene space create "Release plan"',
        'convene space create "Incident 42" -d "Triage" --private --ttl 2h --owner-name Ada --human',
        'convene space create Retro --owner-name "Review bot" --owner-role facilitator',
        'convene space create Standup --json | jq -r .spaceId',
      ),
    )
    .action(async (nameArgument, options, command) => {
      const ctx = app.context(command);
      const ttl = options.ttl === undefined ? undefined : parseTtl(options.ttl);
      checkName(options.ownerName, '--owner-name');
      // The server's defaults, named in what is said of the space.
      const ownerName = options.ownerName ?? 'Owner';
      const ownerRole = options.ownerRole ?? 'owner';
      const name = checkName(
        await required(ctx.out, nameArgument, {
          message: 'Name of the space',
          usage: 'convene space create NAME [options]',
        }),
        'the space’s name',
      );
      // Ctrl-C while it is out: the space may have been created, its key not saved here.
      const answer = await interruptible(
        ctx,
        (signal) =>
          ctx.hub().spaces.create(
            {
              name,
              description: options.description ?? '',
              ...(options.agenda !== undefined ? { agenda: options.agenda } : {}),
              privacy: options.private ? 'private' : 'public',
              ...(ttl !== undefined ? { ttl } : {}),
              ...(options.ownerName !== undefined ? { ownerName: options.ownerName } : {}),
              ...(options.ownerRole !== undefined ? { ownerRole: options.ownerRole } : {}),
              ...(options.human ? { isHuman: true } : {}),
            },
            { signal },
          ),
        spaceMayExist(ctx),
      );
      const created = checkedAnswer(ZAnswers.createdSpace, answer, ctx.server);
      // Read in the write that saves the key (a read before it that failed would lose the key).
      let before: StoredSpace | undefined;
      let twins: string[] = [];
      ctx.keepKey(
        {
          spaceId: created.spaceId,
          name,
          role: 'owner',
          key: created.ownerPrivateKey,
          participantId: created.ownerId,
        },
        created,
        {
          alongside: (file, host) => {
            // The default the last command acted on: this server's, unless --url moved to it from
            // another (whose default is not said replaced: the next commands go here now).
            const moved = ctx.options.url !== undefined && rememberedServer(file.url) !== ctx.url;
            before = !moved && host.defaultSpace ? host.spaces[host.defaultSpace] : undefined;
            // Names are not unique on a server: a second of this one here is named by its id from now on.
            twins = namesakesOf(host, name);
          },
        },
      );
      await ctx.warnIfTokenIgnored('this space');
      const { out } = ctx;
      if (twins.length > 0) out.warn(namesakesWarning(ctx, name, [...twins, name]));
      out.result(created, {
        quiet: () => created.spaceId,
        human: () => {
          // Said in the status line: the next commands act on this space, not the one before.
          out.success(
            `Created ${options.private ? 'private' : 'public'} space ${out.c.bold(name)} (closes in ${formatSeconds(ttl ?? 86_400)}), now your default space${before ? ` instead of ${before.name}` : ''}`,
          );
          // Not the owner key: convene keeps it, and a terminal's scrollback or a CI log should not.
          out.fields([
            ['space', created.spaceId],
            [
              'you are',
              youAre({ name: ownerName, role: ownerRole, isHuman: options.human === true, status: 'active' }),
            ],
          ]);
          const previous = before;
          if (previous) {
            // By its id when another saved space has its name (the one just created may).
            const shared = namesakesOf(ctx.host(), previous.name, previous.spaceId).length > 0;
            const again = shared ? verbatim(previous.spaceId) : previous.name;
            out.hint(
              `\`${commandLine('space use', { args: [again] })}\` makes ${inline(previous.name)} the default again.`,
            );
          }
          if (options.ownerName === undefined && !options.human) {
            out.hint('Others see you as that: --owner-name, --owner-role and --human say who you are.');
          }
          out.hint(
            `The owner key is kept in ${ctx.store.file} (only you can read it), not shown: \`--json\` prints it for scripts, and \`${ctx.line('space key', { args: [verbatim(created.spaceId)] })}\` prints it back.`,
          );
          out.hint('Next: `convene invite` prints the links that let others join.');
        },
      });
    });
}
