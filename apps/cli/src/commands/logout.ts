import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../app';
import { revokeMintedToken } from '../lib/tokens';

export function registerLogout(program: Command, app: App): void {
  program
    .command('logout')
    .summary('revoke and forget the token, forget the session of this server (space keys stay)')
    .description(
      'Log out of this server: revoke on the server the usr_ token convene obtained (by `login` in ' +
        'the browser or `login --password`; revoking takes the dashboard session), then forget the ' +
        'token and the dashboard session. A token given with `login --with-token` may be in use ' +
        'elsewhere, so it is only forgotten. Offline, or without a session, the token is still ' +
        'forgotten and logout says it could not be revoked. Space keys are kept: spaces never ' +
        'needed an account.',
    )
    .addHelpText('after', examples('convene logout', 'convene logout --url https://convene.example.com'))
    .action(async (_options, command) => {
      const ctx = app.context(command);
      const host = ctx.host();
      const token = host.userToken;
      const revocation = token && host.userTokenMinted ? await revokeMintedToken(ctx, token) : undefined;
      const removed = ctx.store.updateHost(ctx.url, (entry) => {
        const had = { userToken: entry.userToken !== undefined, session: entry.session !== undefined };
        delete entry.userToken;
        delete entry.userTokenMinted;
        delete entry.session;
        return had;
      });
      const { out } = ctx;
      const shown = token ? `${token.slice(0, 8)}…` : '';
      out.result(
        {
          url: ctx.url,
          ...removed,
          ...(revocation ? { tokenRevoked: revocation.revoked } : {}),
          ...(revocation?.problem ? { problem: revocation.problem } : {}),
        },
        {
          human: () => {
            if (removed.userToken || removed.session) out.success(`Logged out of ${ctx.url}`);
            else out.info(`Not logged in to ${ctx.url}; nothing to forget.`);
            if (revocation?.revoked) out.info(`Revoked the token ${shown} on the server.`);
            else if (revocation) {
              out.warn(
                `Forgot it here, but could not revoke the token ${shown} on the server: ${revocation.problem}`,
              );
            } else if (token) {
              out.hint(
                `The token ${shown} was given with --with-token, so it stays valid on the server; ` +
                  `\`convene token revoke ${shown}\` (logged in with --password) or the dashboard revokes it.`,
              );
            }
            if (ctx.env.CONVENE_TOKEN) out.warn('CONVENE_TOKEN is still set in your environment.');
          },
        },
      );
    });
}
