import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';

export function registerTokenCreate(token: Command, app: App): void {
  token
    .command('create')
    .argument('[name]', 'a name to recognise it by')
    .usage('[NAME]')
    .summary('mint a usr_ token (shown once)')
    .addHelpText(
      'after',
      examples('convene token create "CI bot"', 'convene token create --json | jq -r .token'),
    )
    .action(async (name, _options, command) => {
      const ctx = app.context(command);
      const created = await ctx.session().tokens.create(name === undefined ? {} : { name });
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
