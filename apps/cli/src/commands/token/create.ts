import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { commandLine } from '../../lib/command-line';
import { CliError } from '../../lib/errors';
import { ExitCode } from '../../lib/exit-codes';
import { checkName } from '../../lib/input';
import { find, hintName, sameName } from '../../lib/resolve';
import { tokenNaming } from '../../lib/tokens';

/** The name the server gives a token created without one; the CLI numbers it past those taken. */
const DEFAULT_NAME = 'API token';

export function registerTokenCreate(token: Command, app: App): void {
  token
    .command('create')
    .argument('[name]', 'a name to recognise it by')
    .usage('[NAME]')
    .summary('mint a usr_ token (shown once)')
    .description(
      'Mint a usr_ token of your account, printed this once: give it to an agent as CONVENE_TOKEN, ' +
        'or to `convene login --with-token` elsewhere, so the spaces it creates or joins show on ' +
        'your dashboard (it opens no space). NAME tells your tokens apart (default "API token", or ' +
        '"API token 2" and on when your live tokens have it); a name one of your live tokens has is refused.',
    )
    .addHelpText(
      'after',
      examples('convene token create "CI bot"', 'convene token create --json | jq -r .token'),
    )
    .action(async (name, _options, command) => {
      const ctx = app.context(command);
      checkName(name, 'the token’s name');
      const session = ctx.session();
      // `token revoke NAME` names a live token (any case): two of a name would ask for an id. So
      // the default name is numbered past those taken, as a second "API token" would be one.
      const tokens = (await session.tokens.list()).filter((t) => !t.revoked);
      const taken = (candidate: string) => tokens.some((t) => sameName(t.name, candidate));
      const live = name === undefined ? undefined : tokens.find((t) => sameName(t.name, name));
      if (live) {
        // By name when `token revoke` takes that name for this token (as it finds a live one), else by id.
        const named = hintName(live, tokenNaming, (typed) => find(tokens, typed, tokenNaming));
        throw new CliError(`you already have a token called "${live.name}" (${live.prefix}…)`, {
          exitCode: ExitCode.conflict,
          hint: `Pick another name, or revoke that one first with \`${commandLine('token revoke', { args: [named] })}\`.`,
          details: { id: live.id },
        });
      }
      let chosen = name ?? DEFAULT_NAME;
      for (let n = 2; name === undefined && taken(chosen); n++) chosen = `${DEFAULT_NAME} ${n}`;
      const created = await session.tokens.create({ name: chosen });
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
