import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { choose } from '../../lib/prompts';
import { pick } from '../../lib/resolve';

export function registerTokenRevoke(token: Command, app: App): void {
  token
    .command('revoke')
    .argument(
      '[token]',
      'the token’s id or name (see `convene token list`; picked from a list on a terminal)',
    )
    .usage('ID')
    .summary('revoke a token, effective at once')
    .addHelpText('after', examples('convene token revoke 0b6f2c1e-…', 'convene token revoke "CI bot"'))
    .action(async (reference, _options, command) => {
      const ctx = app.context(command);
      const session = ctx.session();
      const tokens = await session.tokens.list();
      const live = tokens.filter((t) => !t.revoked);
      const chosen = await choose(ctx.out, reference, {
        message: 'Which token?',
        usage: 'convene token revoke ID',
        items: live,
        id: (t) => t.id,
        label: (t) => `${t.name} (${t.prefix}…)`,
      });
      // A name names a live token: a revoked one of the same name is history.
      const found = pick(tokens.find((t) => t.id === chosen) ? tokens : live, chosen, {
        noun: 'token',
        id: (t) => t.id,
        name: (t) => t.name,
        listCommand: 'convene token list',
      });
      await session.tokens.revoke(found.id);
      ctx.out.result(
        { id: found.id, revoked: true },
        {
          quiet: () => found.id,
          human: () => ctx.out.success(`Revoked token ${ctx.out.c.bold(found.name)} (${found.id})`),
        },
      );
    });
}
