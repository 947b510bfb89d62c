import type { Command } from '@commander-js/extra-typings';
import { AuthenticationError } from '@convene/sdk';
import { type App, examples } from '../app';
import { CliError } from '../lib/errors';
import { ExitCode } from '../lib/exit-codes';
import { relative } from '../lib/render';
import { envTokenHint, tokensStartingLike } from '../lib/tokens';

export function registerWhoami(program: Command, app: App): void {
  program
    .command('whoami')
    .summary('who you are on this server: account, token, default space')
    .description(
      'Show what convene holds for this server, checked with the server: the account of the ' +
        'dashboard session, the usr_ token (saved, or CONVENE_TOKEN) and whether it works, and the ' +
        'default space. Exits 4 when neither a working token nor a session is there.',
    )
    .addHelpText('after', examples('convene whoami', 'convene whoami --json | jq .user.email'))
    .action(async (_options, command) => {
      const ctx = app.context(command);
      const host = ctx.host();
      const token = ctx.userToken();
      const stored = host.session;
      let user = stored?.user;
      let sessionValid = stored !== undefined && new Date(stored.expiresAt).getTime() > Date.now();
      if (sessionValid) {
        try {
          user = await ctx.session().me();
        } catch (error) {
          if (!(error instanceof AuthenticationError)) throw error;
          sessionValid = false;
        }
      }
      const source = ctx.env.CONVENE_TOKEN ? 'CONVENE_TOKEN' : 'saved';
      const tokenValid = token ? await ctx.userTokenWorks(token) : false;
      // The server names a token's account only to a dashboard session, and only its own tokens.
      const known =
        token && tokenValid && sessionValid
          ? tokensStartingLike(await ctx.session().tokens.list(), token)[0]
          : undefined;
      const space = host.defaultSpace ? host.spaces[host.defaultSpace] : undefined;
      const result = {
        url: ctx.url,
        ...(user ? { user } : {}),
        ...(stored ? { session: { expiresAt: stored.expiresAt, valid: sessionValid } } : {}),
        ...(token
          ? {
              userToken: {
                prefix: token.slice(0, 8),
                source,
                valid: tokenValid,
                ...(known ? { name: known.name, id: known.id } : {}),
              },
            }
          : {}),
        ...(space
          ? {
              defaultSpace: {
                spaceId: space.spaceId,
                name: space.name,
                role: space.role,
                participantId: space.participantId,
              },
            }
          : {}),
        spaces: Object.keys(host.spaces).length,
      };
      const { out } = ctx;
      out.result(result, {
        quiet: () => user?.email,
        human: () =>
          out.fields([
            ['server', ctx.url],
            [
              'account',
              user
                ? `${user.name ? `${user.name} ` : ''}<${user.email}>`
                : tokenValid
                  ? 'linked by the token (the server names accounts to a dashboard session only)'
                  : 'none (spaces work without one)',
            ],
            [
              'session',
              stored
                ? sessionValid
                  ? `valid, ends ${relative(stored.expiresAt)}`
                  : 'expired: `convene login --password`'
                : undefined,
            ],
            [
              'token',
              token
                ? `${token.slice(0, 8)}… (${source === 'saved' ? 'saved' : 'from CONVENE_TOKEN'}), ${
                    !tokenValid
                      ? 'not valid (revoked, expired or unknown)'
                      : known && user
                        ? `valid: "${known.name}" of ${user.email}`
                        : sessionValid && user
                          ? `valid, not one of ${user.email}’s`
                          : 'valid'
                  }`
                : 'none',
            ],
            ['space', space ? `${space.name} (${space.role}, default)` : undefined],
            ['spaces', `${result.spaces} with keys on this machine`],
          ]),
      });
      if (token && !tokenValid) {
        const which = source === 'saved' ? 'the saved token' : 'the token in CONVENE_TOKEN';
        const hint =
          source === 'saved'
            ? 'Log in again with `convene login` (or `convene logout` to forget it).'
            : envTokenHint(sessionValid);
        if (!sessionValid) {
          throw new CliError(`${which} does not work on ${ctx.url}`, { exitCode: ExitCode.auth, hint });
        }
        out.warn(`${which[0]!.toUpperCase()}${which.slice(1)} does not work here. ${hint}`);
      }
      if (!token && !sessionValid) {
        throw new CliError(`not logged in to ${ctx.url}`, {
          exitCode: ExitCode.auth,
          hint: 'Run `convene login` (browser) or `convene login --password`.',
        });
      }
    });
}
