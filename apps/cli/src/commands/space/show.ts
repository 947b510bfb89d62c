import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { formatSeconds } from '../../lib/duration';
import { spaceNamed } from '../../lib/input';
import { inline } from '../../lib/output';
import { describeParticipant, relative, styleStatus } from '../../lib/render';

export function registerSpaceShow(space: Command, app: App): void {
  space
    .command('show')
    .argument('[space]', 'name or id (default: the default space)')
    .option('-s, --space <space>', 'name or id, as SPACE')
    .summary('a space: description, agenda, participants, documents')
    .description(
      'Show a space: its state and time left, description and agenda, participants with their status, and documents.',
    )
    .addHelpText('after', examples('convene space show', 'convene space show "Release plan" --json'))
    .action(async (argument, options, command) => {
      const ctx = app.context(command);
      const reference = spaceNamed(argument, options.space, 'convene space show');
      const saved = ctx.space(reference);
      const view = await ctx.spaceClient(saved).get();
      ctx.refreshSpaceNames([view]);
      const { out } = ctx;
      out.result(view, {
        quiet: () => view.spaceId,
        human: () => {
          // Names are one line each, whatever they hold (a newline is shown as \x0a).
          out.line(out.c.bold(inline(view.name)));
          if (view.description) out.line(view.description);
          out.line();
          out.fields([
            ['space', view.spaceId],
            [
              'state',
              view.state === 'open' ? `open, closes in ${formatSeconds(view.ttlRemaining)}` : view.state,
            ],
            ['privacy', view.privacy],
            ['you are', `${saved.role} (${saved.participantId})`],
            ['agenda', view.agenda || undefined],
          ]);
          out.line();
          out.line(out.c.bold(`Participants (${view.participants.length})`));
          for (const p of view.participants) {
            out.line(`  ${describeParticipant(p)}  ${styleStatus(out, p.status)}`);
          }
          out.line();
          out.line(out.c.bold(`Documents (${view.artifacts.length})`));
          const names = new Map(view.participants.map((p) => [p.participantId, p.name]));
          for (const a of view.artifacts) {
            const lock = a.lockedBy ? `, locked by ${inline(names.get(a.lockedBy) ?? a.lockedBy)}` : '';
            out.line(`  ${inline(a.name)}  v${a.version}, updated ${relative(a.updatedAt)}${lock}`);
          }
        },
      });
    });
}
