import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../app';

export function registerLogout(program: Command, app: App): void {
  program
    .command('logout')
    .summary('forget the token and session of this server (space keys stay)')
    .description(
      'Forget the usr_ token and the dashboard session kept for this server. Space keys are kept: ' +
        'spaces never needed an account. Revoke tokens themselves with `convene token revoke`.',
    )
    .addHelpText('after', examples('convene logout', 'convene logout --url https://convene.example.com'))
    .action(async (_options, command) => {
      const ctx = app.context(command);
      const removed = ctx.store.updateHost(ctx.url, (host) => {
        const had = { userToken: host.userToken !== undefined, session: host.session !== undefined };
        delete host.userToken;
        delete host.session;
        return had;
      });
      const { out } = ctx;
      out.result(
        { url: ctx.url, ...removed },
        {
          human: () => {
            if (removed.userToken || removed.session) out.success(`Logged out of ${ctx.url}`);
            else out.info(`Not logged in to ${ctx.url}; nothing to forget.`);
            if (ctx.env.CONVENE_TOKEN) out.warn('CONVENE_TOKEN is still set in your environment.');
          },
        },
      );
    });
}
