import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { verbatim } from '../../lib/quote';
import { relative } from '../../lib/render';
import { suggest } from '../../lib/suggest';

export function registerArtifactList(artifact: Command, app: App): void {
  artifact
    .command('list')
    .alias('ls')
    .summary('the documents of a space')
    .description(
      'List the documents of a space: name, id, version, last update, and who holds the edit lock, until when. ' +
        'With --json: the API’s list of them, each with its content.',
    )
    .option('-s, --space <space>', 'name or id (default: the default space)')
    .addHelpText(
      'after',
      examples('convene artifact list', 'convene artifact list --json | jq -r ".[].name"'),
    )
    .action(async (options, command) => {
      const ctx = app.context(command);
      const saved = ctx.space(options.space);
      const space = ctx.spaceClient(saved);
      const { out } = ctx;
      // The API's list, as every other --json prints it: each document whole, its content
      // included (up to 4 MiB of them; past that `contentOmitted`, which `artifact show` reads).
      if (out.mode.json) {
        out.json((await space.artifacts.list()).artifacts);
        return;
      }
      // The space's summaries carry the lock holders, which its participants name.
      const view = await ctx.readSpace(space);
      const names = new Map(view.participants.map((p) => [p.participantId, p.name]));
      out.result(view.artifacts, {
        quiet: () => view.artifacts.map((a) => a.id).join('\n') || undefined,
        human: () =>
          out.table(
            view.artifacts,
            [
              { header: 'name', value: (a) => a.name, style: (t) => out.c.bold(t) },
              { header: 'id', value: (a) => a.id, id: true },
              { header: 'version', value: (a) => String(a.version) },
              { header: 'updated', value: (a) => relative(a.updatedAt) },
              {
                header: 'lock',
                value: (a) =>
                  a.lockedBy
                    ? `${a.lockedBy === saved.participantId ? 'you' : (names.get(a.lockedBy) ?? a.lockedBy)}${a.lockExpiresAt ? `, ${relative(a.lockExpiresAt)}` : ''}`
                    : '',
                style: (t) => out.c.yellow(t),
              },
            ],
            `No documents yet: \`${suggest(ctx, 'artifact create', { args: [verbatim('NAME')] })}\`.`,
          ),
      });
    });
}
