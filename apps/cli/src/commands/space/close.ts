import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { documentNamed } from '../../lib/artifacts';
import { isSpaceClosed } from '../../lib/errors';
import { spaceNamed } from '../../lib/input';
import { inline } from '../../lib/output';
import { confirm, requireSpaceOrYes } from '../../lib/prompts';
import { verbatim } from '../../lib/quote';
import { suggest } from '../../lib/suggest';

export function registerSpaceClose(space: Command, app: App): void {
  space
    .command('close')
    .argument(
      '[space]',
      'name or id (default: the default space, after confirming; elsewhere only with --yes)',
    )
    .option('-s, --space <space>', 'name or id, as SPACE')
    .usage('[SPACE] [options]')
    .summary('close a space for good (owner)')
    .description(
      'Close a space for good: every key stops working and open streams end, and its documents and ' +
        'messages can no longer be read by anyone (download what you want to keep first). convene ' +
        'keeps the space, listed as closed, until `convene leave` forgets it; closing it again says ' +
        'it is closed already, exit 0. On a terminal it asks ' +
        'first, and SPACE defaults to the default space; elsewhere nobody is asked, so name the ' +
        'space, or give --yes alone to close the default space.',
    )
    .option('-y, --yes', 'do not ask for confirmation')
    .addHelpText(
      'after',
      examples(
        'convene space close "Release plan"',
        'convene space close 3f2e… --yes',
        'convene space close --yes',
      ),
    )
    .action(async (argument, options, command) => {
      const ctx = app.context(command);
      const reference = spaceNamed(ctx, argument, options.space, 'convene space close');
      requireSpaceOrYes(ctx.out, reference, options.yes, { verb: 'close', command: 'convene space close' });
      const saved = ctx.space(reference);
      await ctx.requireOwner(saved, 'close it');
      const client = ctx.spaceClient(saved);
      const { out } = ctx;
      // As `leave` takes a space closed already: nothing left to do, so said, exit 0 (a teardown
      // run twice). convene keeps the space, as a participant's convene does, until `leave`.
      const alreadyClosed = () => {
        out.result(
          { ok: true, alreadyClosed: true },
          {
            quiet: () => saved.spaceId,
            human: () => out.success(`${out.c.bold(inline(saved.name))} is already closed; nothing changed`),
          },
        );
      };
      let result: Awaited<ReturnType<typeof client.close>>;
      let documents: readonly { id: string; name: string }[];
      const asked = out.mode.interactive && !options.yes;
      try {
        ({ artifacts: documents } = await ctx.readSpace(client));
        // Only a question can still be answered by saving first: it is asked on a terminal alone,
        // without --yes. Otherwise nobody reads the warning before the close, so it is not said
        // (advice to save, printed in the same run as the close, could no longer be followed);
        // what was lost is said after it instead.
        if (asked) {
          const warning = closingWarning(
            documents,
            suggest(ctx, 'artifact download', {
              args: [documents[0] ? documentNamed(documents, documents[0]) : verbatim('NAME')],
              options: { '-o': verbatim('FILE') },
            }),
          );
          await confirm(out, `Close "${saved.name}" for good? ${warning}`, options.yes);
        }
        result = await client.close();
      } catch (error) {
        // Closed already, or meanwhile (another terminal, its time to live).
        if (isSpaceClosed(error)) return alreadyClosed();
        throw error;
      }
      const wasDefault = ctx.isDefaultSpace(saved.spaceId);
      // The only space saved here stays the default: what is said of it (closed) is what to know.
      const alone = Object.keys(ctx.host().spaces).length === 1;
      out.result(result, {
        quiet: () => saved.spaceId,
        human: () => {
          out.success(`Closed ${out.c.bold(inline(saved.name))}; its keys no longer work`);
          if (!asked) out.info(lost(documents));
          out.hint(
            `\`${suggest(ctx, 'leave', { always: true })}\` forgets it here${wasDefault && alone ? '; `convene space create NAME` starts a new one' : ''}.`,
          );
        },
      });
      if (wasDefault) await ctx.defaultAfter(saved.spaceId, 'closed');
    });
}

/**
 * What closing takes from everyone: the keys, and with them every document and message (the
 * server keeps them a while, but no key reads them). The documents are counted, and the first
 * named in the command line that saves it.
 */
function closingWarning(documents: readonly { name: string }[], download: string): string {
  const save =
    documents.length === 0 ? '' : ` Save ${documents.length === 1 ? 'it' : 'them'} first: \`${download}\`.`;
  return `Every key stops working, and ${readable(documents)} can no longer be read by anyone.${save}`;
}

/** What a close nobody was asked about took, said once it is done: nothing to save any more. */
function lost(documents: readonly { name: string }[]): string {
  const what = readable(documents);
  return `${what[0]!.toUpperCase()}${what.slice(1)} can no longer be read by anyone.`;
}

/** `its messages`, or `its 2 documents and messages`: what no key reads once the space is closed. */
function readable(documents: readonly { name: string }[]): string {
  return documents.length === 0
    ? 'its messages'
    : `its ${documents.length === 1 ? 'document' : `${documents.length} documents`} and messages`;
}
