import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { relative } from '../../lib/render';

export function registerTokenList(token: Command, app: App): void {
  token
    .command('list')
    .alias('ls')
    .summary('your tokens, newest first (never their secrets)')
    .description(
      'List the tokens of your account, newest first: name, id, the prefix the token starts with, ' +
        'when it was created and last used, and whether it is revoked. A token is shown only when ' +
        'it is created.',
    )
    .addHelpText('after', examples('convene token list', 'convene token list --json'))
    .action(async (_options, command) => {
      const ctx = app.context(command);
      const tokens = await ctx.session().tokens.list();
      const { out } = ctx;
      out.result(tokens, {
        quiet: () => tokens.map((t) => t.id).join('\n') || undefined,
        human: () =>
          out.table(
            tokens,
            [
              { header: 'name', value: (t) => t.name, style: (s) => out.c.bold(s) },
              { header: 'id', value: (t) => t.id, id: true },
              { header: 'prefix', value: (t) => `${t.prefix}…` },
              { header: 'created', value: (t) => relative(t.createdAt) },
              { header: 'last used', value: (t) => (t.lastUsedAt ? relative(t.lastUsedAt) : 'never') },
              {
                header: 'state',
                value: (t) => (t.revoked ? 'revoked' : 'active'),
                style: (s, t) => (t.revoked ? out.c.dim(s) : out.c.green(s)),
              },
            ],
            'No tokens yet: `convene token create NAME`.',
          ),
      });
    });
}
