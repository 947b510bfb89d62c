import type { Command } from '@commander-js/extra-typings';
import { NotFoundError } from '@convene/sdk';
import { type App, examples } from '../../app';
import { type Context, isUuid, makeDefault } from '../../lib/context';
import { CliError } from '../../lib/errors';
import { ExitCode } from '../../lib/exit-codes';
import { isSpaceClosed } from '../../lib/failure';
import { checkedAnswer, ZAnswers } from '../../lib/not-convene';
import { required } from '../../lib/prompts';
import type { StoredSpace } from '../../lib/store';

export function registerSpaceUse(space: Command, app: App): void {
  space
    .command('use')
    .argument('[space]', 'name or id of a space you hold a key for')
    .usage('SPACE')
    .summary('make a space the default (or recover its key after `convene login`)')
    .description(
      'Make a space the default for commands that name none. A space whose key this machine does not have yet (created or joined elsewhere) is recovered by its id from your account, after `convene login`.',
    )
    .addHelpText(
      'after',
      examples(
        'convene space use "Release plan"',
        'convene space use 3f2e',
        '# after `convene login` on a new machine',
        'convene space use 3f2e1c0a-…',
      ),
    )
    .action(async (reference, _options, command) => {
      const ctx = app.context(command);
      const name = await required(ctx.out, reference, {
        message: 'Space (name or id)',
        usage: 'convene space use SPACE',
      });
      const canRecover = isUuid(name) && !ctx.host().spaces[name] && (ctx.hasSession() || ctx.userToken());
      const saved = canRecover ? await recoverKey(ctx, name) : ctx.space(name);
      ctx.store.updateHost(ctx.url, (host, file) => makeDefault(file, host, ctx.url, saved.spaceId));
      ctx.out.result(
        { spaceId: saved.spaceId, name: saved.name, role: saved.role, participantId: saved.participantId },
        {
          quiet: () => saved.spaceId,
          human: () =>
            ctx.out.success(`Default space is now ${ctx.out.c.bold(saved.name)} (${saved.spaceId})`),
        },
      );
    });
}

/**
 * The key the logged-in human holds for a space (getMySpaceKey), with the dashboard session or
 * the usr_ token; saved like a key of a space created or joined here.
 */
async function recoverKey(ctx: Context, spaceId: string): Promise<StoredSpace> {
  const session = ctx.hasSession() ? ctx.session() : undefined;
  if (!session) ctx.using = { kind: 'server' };
  const recovered = await (session ? session.spaceKey(spaceId) : ctx.hub().spaces.recoverKey(spaceId)).catch(
    (error: unknown) => {
      // As for any whole space id this machine holds no key for (exit 4): the space may well
      // exist, and what is missing is a key, which joining gives.
      if (!(error instanceof NotFoundError)) throw error;
      // Why, when the account held a key there (removed, left, the space over): the server says
      // so to that account alone, its code saying which.
      const why = /^key for this space not found: (.+)$/.exec(error.body?.error ?? '')?.[1];
      const over = isSpaceClosed(error);
      throw new CliError(
        `your account holds no ${why ? 'working ' : ''}key for space ${spaceId}${why ? `: ${why}` : ''}`,
        {
          // A space that is over exits 6, as a closed space does for every command.
          exitCode: over ? ExitCode.conflict : ExitCode.auth,
          ...(over
            ? {}
            : {
                hint: 'Join it with an invitation link (`convene join LINK`), or log in as the account that created or joined it.',
              }),
          cause: error,
        },
      );
    },
  );
  const { role, privateKey } = checkedAnswer(ZAnswers.recoveredKey, recovered, ctx.url);
  const view = await ctx.hub().space(spaceId, privateKey).get();
  checkedAnswer(ZAnswers.spaceName, view, ctx.url);
  // Which participant the key is: the dashboard lists it; the owner is the one marked so.
  const listed = session ? (await session.spaces()).spaces.find((s) => s.spaceId === spaceId) : undefined;
  const participantId =
    listed?.participantId ??
    (role === 'owner' ? view.participants.find((p) => p.isOwner)?.participantId : undefined);
  const space = { spaceId, name: view.name, role, key: privateKey, participantId: participantId ?? '' };
  // A plain save: a recovered key that cannot be kept is not lost, the account recovers it again.
  ctx.saveSpace(space);
  ctx.out.success(`Recovered your ${role} key for ${ctx.out.c.bold(view.name)}`);
  return { ...space, savedAt: new Date().toISOString() };
}
