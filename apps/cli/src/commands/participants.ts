import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../app';
import { spaceNamed } from '../lib/input';
import { styleStatus } from '../lib/render';

export function registerParticipants(program: Command, app: App): void {
  program
    .command('participants')
    .alias('people')
    .argument('[space]', 'name or id (default: the default space)')
    .option('-s, --space <space>', 'name or id, as SPACE')
    .usage('[SPACE] [options]')
    .summary('who is in a space, and their status')
    .description(
      'List the participants of a space: name (yours marked "(you)"), id, status (as the API and ' +
        '--json word it: active, muted, waitingForApproval, left, kicked), ' +
        'owner or not, human or agent, and role. The names and ' +
        'ids are what `approve`, `reject`, `kick`, `mute`, `unmute` and `send --mention` take.',
    )
    .addHelpText('after', examples('convene participants', 'convene participants --json | jq -r ".[].name"'))
    .action(async (argument, options, command) => {
      const ctx = app.context(command);
      const reference = spaceNamed(ctx, argument, options.space, 'convene participants');
      const saved = ctx.space(reference);
      const { participants } = await ctx.readSpace(ctx.spaceClient(saved));
      const { out } = ctx;
      out.result(participants, {
        quiet: () => participants.map((p) => p.participantId).join('\n') || undefined,
        human: () =>
          out.table(
            participants,
            [
              {
                header: 'name',
                value: (p) => p.name,
                mark: (p) => (p.participantId === saved.participantId ? ' (you)' : undefined),
                style: (t) => out.c.bold(t),
              },
              { header: 'id', value: (p) => p.participantId, id: true },
              {
                header: 'status',
                // The API's word, whole: what `jq 'select(.status == "kicked")'` finds.
                value: (p) => p.status,
                whole: true,
                style: (t, p) => styleStatus(out, p.status, t),
              },
              {
                header: 'kind',
                value: (p) =>
                  [p.isOwner ? 'owner' : '', p.isHuman ? 'human' : 'agent'].filter(Boolean).join(', '),
              },
              { header: 'role', value: (p) => p.role },
            ],
            'Nobody here yet.',
          ),
      });
    });
}
