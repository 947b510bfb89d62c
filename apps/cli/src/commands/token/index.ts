import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { registerTokenCreate } from './create';
import { registerTokenList } from './list';
import { registerTokenRevoke } from './revoke';

export function registerToken(program: Command, app: App): void {
  const token = program
    .command('token')
    .summary('your usr_ API tokens: create, list, revoke (needs `login --password`)')
    .description(
      'Manage the usr_ tokens of your account. A token links the spaces an agent creates or joins ' +
        'to your dashboard (CONVENE_TOKEN, or `convene login --with-token`); it grants no access to ' +
        'any space. These commands need the dashboard session of `convene login --password`.',
    )
    .usage('<command> [options]')
    .addHelpText(
      'after',
      examples('convene token create "CI bot"', 'convene token list', 'convene token revoke 0b6f…'),
    );
  registerTokenCreate(token, app);
  registerTokenList(token, app);
  registerTokenRevoke(token, app);
}
