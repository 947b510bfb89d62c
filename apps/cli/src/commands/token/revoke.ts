import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { CliError, UsageError } from '../../lib/errors';
import { ExitCode } from '../../lib/exit-codes';
import { inline } from '../../lib/output';
import { choose, confirm } from '../../lib/prompts';
import { find, pick } from '../../lib/resolve';
import { tokenNaming, tokensStartingLike } from '../../lib/tokens';

export function registerTokenRevoke(token: Command, app: App): void {
  token
    .command('revoke')
    .argument(
      '[token]',
      'the token’s id, name, prefix (as `convene token list` shows it) or the token itself; picked from a list on a terminal',
    )
    .usage('ID|NAME|PREFIX|TOKEN')
    .summary('revoke a token, effective at once')
    .description(
      'Revoke a token of your account at once: whatever uses it no longer links to your dashboard. ' +
        'Name it by id (or its start), by name (a live token before a revoked one), by the prefix `convene token list` shows, or give ' +
        'the token itself. A token already revoked is left as it is (exit 0, and said so). On a ' +
        'terminal it asks first (--yes does not); without one it does not ask.',
    )
    .option('-y, --yes', 'do not ask for confirmation')
    .addHelpText(
      'after',
      examples(
        'convene token revoke 0b6f2c1e-…',
        'convene token revoke "CI bot"',
        'convene token revoke 0b6f2c1e --yes',
        'convene token revoke usr_Ab3x…',
        'convene token revoke "$LEAKED_TOKEN"',
      ),
    )
    .action(async (reference, options, command) => {
      const ctx = app.context(command);
      const session = ctx.session();
      const tokens = await session.tokens.list();
      const live = tokens.filter((t) => !t.revoked);
      const chosen = await choose(ctx.out, reference, {
        message: 'Which token?',
        usage: 'convene token revoke ID|NAME|PREFIX|TOKEN',
        items: live,
        id: (t) => t.id,
        label: (t) => `${t.name} (${t.prefix}…)`,
        none: () =>
          new CliError('no token to revoke: every token of your account is revoked already', {
            exitCode: ExitCode.notFound,
            hint: '`convene token list` shows them.',
          }),
      });
      // A name or an id start names a live token first; else a revoked one, to say it was already
      // revoked (as its full id or the token itself do) rather than that there is no such token.
      const found =
        byToken(live, chosen, { whole: true }) ??
        byToken(tokens, chosen) ??
        find(live, chosen, tokenNaming) ??
        find(
          tokens.filter((t) => t.revoked),
          chosen,
          tokenNaming,
        ) ??
        pick(tokens, chosen, { ...tokenNaming, listCommand: 'convene token list' });
      const name = ctx.out.c.bold(found.name);
      // Revoking is idempotent (exit 0 either way), but never claimed when it had happened before.
      if (found.revoked) {
        ctx.out.result(
          { id: found.id, revoked: true, alreadyRevoked: true },
          {
            quiet: () => found.id,
            human: () => ctx.out.info(`Token ${name} (${found.id}) was already revoked; nothing changed.`),
          },
        );
        return;
      }
      // The token convene links with here (saved, or CONVENE_TOKEN) is said so: revoking it
      // unlinks this terminal too.
      const here = ctx.userToken();
      const ours = here !== undefined && tokensStartingLike([found], here).length > 0;
      await confirm(
        ctx.out,
        `Revoke the token ${inline(found.name)} (${found.prefix}…)${ours ? ', the one convene uses here' : ''}? Whatever uses it stops linking to your dashboard.`,
        options.yes,
      );
      await session.tokens.revoke(found.id);
      ctx.out.result(
        { id: found.id, revoked: true },
        { quiet: () => found.id, human: () => ctx.out.success(`Revoked token ${name} (${found.id})`) },
      );
    });
}

/**
 * The token a `usr_` string names: the token itself (its stored prefix is its start), or a start
 * of it as `token list` shows it (the … may be kept). Undefined when nothing matches; several is a
 * usage error that names them. `whole`: only the token or its whole prefix (a live token of that
 * prefix comes first; a shorter start is looked for among every token, so that `usr_` with one
 * live token among revoked ones is not taken for it).
 */
function byToken<T extends { id: string; name: string; prefix: string }>(
  tokens: readonly T[],
  reference: string,
  { whole = false } = {},
): T | undefined {
  const typed = reference.replace(/(…|\.\.\.)$/, '');
  if (!typed.startsWith('usr_')) return undefined;
  const matches = tokensStartingLike(tokens, typed).filter((t) => !whole || typed.length >= t.prefix.length);
  if (matches.length > 1) {
    throw new UsageError(
      `${matches.length} tokens start with "${typed}"`,
      `Name one by id: ${matches.map((t) => `${t.id} (${inline(t.name)}, ${t.prefix}…)`).join(', ')}`,
    );
  }
  return matches[0];
}
