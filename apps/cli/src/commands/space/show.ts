import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../../app';
import { timeLeft } from '../../lib/duration';
import { spaceNamed } from '../../lib/input';
import { inline } from '../../lib/output';
import { relative, styleStatus, youAre } from '../../lib/render';

export function registerSpaceShow(space: Command, app: App): void {
  space
    .command('show')
    .argument('[space]', 'name or id (default: the default space)')
    .option('-s, --space <space>', 'name or id, as SPACE')
    .usage('[SPACE] [options]')
    .summary('a space: description, agenda, participants, documents')
    .description(
      'Show a space: its state and time left, description and agenda, who you are in it (name, ' +
        'role, status), participants with their status, and documents.',
    )
    .addHelpText('after', examples('convene space show', 'convene space show "Release plan" --json'))
    .action(async (argument, options, command) => {
      const ctx = app.context(command);
      const reference = spaceNamed(ctx, argument, options.space, 'convene space show');
      const saved = ctx.space(reference);
      const view = await ctx.readSpace(ctx.spaceClient(saved));
      const { out } = ctx;
      const me = view.participants.find((p) => p.participantId === saved.participantId);
      out.result(view, {
        quiet: () => view.spaceId,
        human: () => {
          // Names are one line each, whatever they hold (a newline is shown as \x0a).
          out.line(out.c.bold(inline(view.name)));
          if (view.description) out.line(view.description);
          out.line();
          out.fields([
            ['space', view.spaceId],
            ['state', view.state === 'open' ? `open, closes in ${timeLeft(view.ttlRemaining)}` : view.state],
            ['privacy', view.privacy],
            ['you are', `${me ? youAre(me) : saved.role} (${saved.participantId})`],
            ['agenda', view.agenda || undefined],
            [
              'budget',
              view.maxMessagesPerMinute == null
                ? undefined
                : `${view.maxMessagesPerMinute} messages a minute per participant`,
            ],
          ]);
          out.line();
          out.line(out.c.bold(`Participants (${view.participants.length})`));
          // In columns, as `participants` has them: name (yours marked), kind, status.
          const people = view.participants;
          out.columns(
            people.map((p) => [
              { value: p.name, mark: p.participantId === saved.participantId ? ' (you)' : '' },
              [p.isOwner ? 'owner' : '', p.isHuman ? 'human' : 'agent'].filter(Boolean).join(', '),
              p.status,
            ]),
            {
              indent: '  ',
              whole: [2],
              style: (text, r, i) => (i === 2 ? styleStatus(out, people[r]!.status, text) : text),
            },
          );
          out.line();
          out.line(out.c.bold(`Documents (${view.artifacts.length})`));
          const names = new Map(view.participants.map((p) => [p.participantId, p.name]));
          out.columns(
            view.artifacts.map((a) => [
              a.name,
              `v${a.version}, updated ${relative(a.updatedAt)}${a.lockedBy ? `, locked by ${a.lockedBy === saved.participantId ? 'you' : (names.get(a.lockedBy) ?? a.lockedBy)}` : ''}`,
            ]),
            { indent: '  ' },
          );
        },
      });
    });
}
