import type { Command } from '@commander-js/extra-typings';
import { ConflictError, type Session } from '@convene/sdk';
import { type App, examples } from '../app';
import { conflictError } from '../lib/failure';
import { checkName } from '../lib/input';
import { shellWord } from '../lib/quote';
import { emailAndPassword, keepSession } from './login';

export function registerSignup(program: Command, app: App): void {
  program
    .command('signup')
    .summary('create an account on this server, and log in to it')
    .description(
      'Create an account on this server with an email and a password (8 characters or more), as ' +
        'its /login page does, then go on as `convene login --password`: the dashboard session ' +
        'that `convene token …` needs is kept, and a usr_ token is minted for this terminal so ' +
        'the spaces you create or join show on your dashboard. The password is asked for on a ' +
        'terminal, twice (both again while they differ), else read from stdin.',
    )
    .option('--email <email>', 'the account’s email (asked for on a terminal)')
    .option('-n, --name <name>', 'your name on the dashboard (default: the start of the email)')
    .addHelpText(
      'after',
      examples(
        'convene signup --email ada@example.com --name Ada',
        'printf "%s" "$PASSWORD" | convene signup --email ada@example.com',
      ),
    )
    .action(async (options, command) => {
      const ctx = app.context(command);
      const name = checkName(options.name, '--name');
      const { email, password } = await emailAndPassword(ctx, options.email, 'convene signup', {
        minLength: PASSWORD_MIN,
        twice: true,
      });
      ctx.using = { kind: 'server' };
      let session: Session;
      try {
        session = await ctx.hub().auth.signup({ email, password, ...(name !== undefined ? { name } : {}) });
      } catch (error) {
        if (error instanceof ConflictError) {
          throw conflictError(
            error,
            `Log in to it with \`convene login --password --email ${shellWord(email)}\`.`,
          );
        }
        throw error;
      }
      await keepSession(ctx, session, 'Created your account and logged in to');
    });
}

/**
 * The server's shortest password (the contract's `passwordMin`, which the SDK's `limits` does not
 * carry): a prompt asks again below it.
 */
const PASSWORD_MIN = 8;
