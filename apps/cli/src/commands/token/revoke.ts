import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { required } from '../../lib/prompts';

export function registerTokenRevoke(token: Command, app: App): void {
  token
    .command('revoke')
    .argument('[id]', 'the token’s id (see `convene token list`)')
    .usage('ID')
    .summary('revoke a token, effective at once')
    .addHelpText('after', examples('convene token revoke 0b6f2c1e-…'))
    .action(async (idArgument, _options, command) => {
      const ctx = app.context(command);
      const id = await required(ctx.out, idArgument, {
        message: 'Token id',
        usage: 'convene token revoke ID',
      });
      await ctx.session().tokens.revoke(id);
      ctx.out.result(
        { id, revoked: true },
        { quiet: () => id, human: () => ctx.out.success(`Revoked token ${id}`) },
      );
    });
}
