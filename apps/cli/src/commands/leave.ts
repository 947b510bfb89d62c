import type { Command } from '@commander-js/extra-typings';
import { AuthenticationError, ConflictError } from '@convene/sdk';
import { type App, examples } from '../app';
import { isSpaceClosed } from '../lib/errors';
import { conflictError, isSpaceGone } from '../lib/failure';
import { spaceNamed } from '../lib/input';
import { isNotConvene } from '../lib/not-convene';
import { confirm, requireSpaceOrYes } from '../lib/prompts';
import { suggest } from '../lib/suggest';

export function registerLeave(program: Command, app: App): void {
  program
    .command('leave')
    .argument(
      '[space]',
      'name or id (default: the default space, after confirming; elsewhere only with --yes)',
    )
    .option('-s, --space <space>', 'name or id, as SPACE')
    .usage('[SPACE] [options]')
    .summary('leave a space; your key stops working')
    .description(
      'Leave a space: your key stops working and convene forgets it. A space already closed (or ' +
        'past its time to live) or one whose server no longer takes your key (you were removed) is ' +
        'only forgotten here. One the server says it does not have (deleted after its retention, or ' +
        'a server started on other data at the same address, where the key may still work elsewhere) ' +
        'is refused unless --forget is given. The owner cannot leave an open space (said at once, without asking, ' +
        'and of the default space without naming it): `convene space close` ends it. ' +
        'On a terminal it asks first, and SPACE defaults to the default space; elsewhere nobody is ' +
        'asked, so name the space, or give --yes alone to leave the default space.',
    )
    .option('-y, --yes', 'do not ask for confirmation')
    .option(
      '--forget',
      'forget it here even when the server says it does not have it (deleted, or not the server that keeps it)',
    )
    .addHelpText(
      'after',
      examples('convene leave "Release plan"', 'convene leave --yes', 'convene leave "Old plan" --forget'),
    )
    .action(async (argument, options, command) => {
      const ctx = app.context(command);
      const reference = spaceNamed(ctx, argument, options.space, 'convene leave');
      const nameRequired = () =>
        requireSpaceOrYes(ctx.out, reference, options.yes, { verb: 'leave', command: 'convene leave' });
      // The owner of the default space is told at once that the owner cannot leave (exit 6), as
      // on a terminal, not first to name the space off one: what they meant to leave is known.
      const host = ctx.host();
      const byDefault =
        reference === undefined && host.defaultSpace ? host.spaces[host.defaultSpace] : undefined;
      if (byDefault?.role !== 'owner') nameRequired();
      const saved = ctx.space(reference);
      const client = ctx.spaceClient(saved);
      // Its name as the server says it now (the owner may have renamed it since it was saved), for
      // what is asked and said; a space closed, or a key refused, has no membership left to end.
      const over = await ctx.readSpace(client).then(
        () => undefined,
        (error: unknown) => {
          const ended = membershipOver(error);
          return !ended || forgetsOnlyWhenTold(ended, options.forget) ? Promise.reject(error) : ended;
        },
      );
      // The owner cannot leave (the server says so at once, or forgets a closed space): asking
      // first would only delay that answer behind a Yes.
      if (saved.role !== 'owner') {
        await confirm(ctx.out, `Leave "${saved.name}"? Your key stops working.`, options.yes);
      }
      let result: Over | { ok: boolean };
      let ended = over;
      try {
        result = over ?? (await client.leave());
      } catch (error) {
        ended = membershipOver(error);
        if (ended && forgetsOnlyWhenTold(ended, options.forget)) throw error;
        if (ended) result = ended;
        // The owner's membership ends only with the space (an open one: a closed one is forgotten
        // below), which is not the state changing meanwhile.
        else if (error instanceof ConflictError && saved.role === 'owner') {
          throw conflictError(
            error,
            `Close it for good with \`${suggest(ctx, 'space close', { always: true })}\`: every key stops working, and convene keeps the space, listed as closed, until \`${suggest(ctx, 'leave', { always: true })}\` forgets it.`,
          );
        } else throw error;
      }
      // Forgetting the owner's space (closed, gone, its key refused) is leaving it: off a terminal,
      // named or with --yes.
      if (ended && saved.role === 'owner') nameRequired();
      const wasDefault = ctx.isDefaultSpace(saved.spaceId);
      ctx.forgetSpace(saved.spaceId);
      const { out } = ctx;
      const name = out.c.bold(saved.name);
      out.result(result, {
        quiet: () => saved.spaceId,
        human: () =>
          out.success(
            'closed' in result
              ? `Forgot ${name} here: it was already closed, so its keys no longer work anywhere`
              : 'keyRefused' in result
                ? `Forgot ${name} here: the server no longer takes its key (you were removed, or left already)`
                : 'gone' in result
                  ? `Forgot ${name} here: the server no longer has it (deleted after its retention, or its database was replaced)`
                  : `Left ${name}`,
          ),
      });
      if (wasDefault) await ctx.defaultAfter(saved.spaceId, 'left');
    });
}

type Over = { ok: true; closed: true } | { ok: true; keyRefused: true } | { ok: true; gone: true };

/**
 * A membership over already: closing ended every membership, a key the server refuses (its
 * participant was removed, or left elsewhere) is one over, and so is one in a space the server no
 * longer has (a space's read and leave have nothing else to find). What is left to do is to stop
 * holding the key.
 */
function membershipOver(error: unknown): Over | undefined {
  if (isSpaceClosed(error)) return { ok: true, closed: true };
  // Only a Convene server's word: a proxy's 401 or 404 (a deploy under way, another site at the
  // address) says nothing of the key, which would be lost for good.
  if (isNotConvene(error)) return undefined;
  if (error instanceof AuthenticationError) return { ok: true, keyRefused: true };
  if (isSpaceGone(error)) return { ok: true, gone: true };
  return undefined;
}

/**
 * A space the server says it does not have: deleted after its retention, or the server answering
 * is not the one that keeps it (one started on other data at the same address), where the key
 * still works, and may be the only copy of an owner key. So it is not forgotten on that word
 * alone: the error is the one every command gives of it (exit 5, saying that first), whose hint
 * is the `leave --forget` that forgets it.
 */
const forgetsOnlyWhenTold = (ended: Over, forget: boolean | undefined): boolean =>
  'gone' in ended && forget !== true;
