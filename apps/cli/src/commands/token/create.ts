import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { CliError } from '../../lib/errors';
import { ExitCode } from '../../lib/exit-codes';
import { checkName } from '../../lib/input';
import { quoted } from '../../lib/quote';

export function registerTokenCreate(token: Command, app: App): void {
  token
    .command('create')
    .argument('[name]', 'a name to recognise it by')
    .usage('[NAME]')
    .summary('mint a usr_ token (shown once)')
    .description(
      'Mint a usr_ token of your account, printed this once: give it to an agent as CONVENE_TOKEN, ' +
        'or to `convene login --with-token` elsewhere, so the spaces it creates or joins show on ' +
        'your dashboard (it opens no space). NAME tells your tokens apart (default "API token"); a ' +
        'name one of your live tokens has is refused.',
    )
    .addHelpText(
      'after',
      examples('convene token create "CI bot"', 'convene token create --json | jq -r .token'),
    )
    .action(async (name, _options, command) => {
      const ctx = app.context(command);
      checkName(name, 'the token’s name');
      const session = ctx.session();
      // `token revoke NAME` names a live token (any case): two of a name would ask for an id.
      const live =
        name === undefined
          ? undefined
          : (await session.tokens.list()).find(
              (t) => !t.revoked && t.name.toLowerCase() === name.toLowerCase(),
            );
      if (live) {
        throw new CliError(`you already have a token called "${live.name}" (${live.prefix}…)`, {
          exitCode: ExitCode.conflict,
          hint: `Pick another name, or revoke that one first with \`convene token revoke ${quoted(live.name)}\`.`,
          details: { id: live.id },
        });
      }
      const created = await session.tokens.create(name === undefined ? {} : { name });
      const { out } = ctx;
      out.result(created, {
        quiet: () => created.token,
        human: () => {
          out.success(`Created token ${out.c.bold(created.name)} (${created.id})`);
          out.line(created.token);
          out.hint('It is shown this once. Give it to an agent as CONVENE_TOKEN.');
        },
      });
    });
}
