import type { Command } from '@commander-js/extra-typings';
import { type App, examples } from '../app';
import { choose } from '../lib/prompts';
import { pick } from '../lib/resolve';

/** The owner's four moderation verbs share one shape: a participant, by name or id. */
const ACTIONS = [
  {
    name: 'approve',
    summary: 'admit someone waiting to join a private space (owner)',
    done: 'Approved',
    call: 'approve',
    candidates: ['waitingForApproval'],
  },
  {
    name: 'kick',
    summary: 'remove a participant; their key stops working (owner)',
    done: 'Removed',
    call: 'kick',
    candidates: ['active', 'muted', 'waitingForApproval'],
  },
  {
    name: 'mute',
    summary: 'stop a participant from sending; they still read (owner)',
    done: 'Muted',
    call: 'mute',
    candidates: ['active'],
  },
  {
    name: 'unmute',
    summary: 'let a muted participant send again (owner)',
    done: 'Unmuted',
    call: 'unmute',
    candidates: ['muted'],
  },
] as const;

export function registerModeration(program: Command, app: App): void {
  for (const action of ACTIONS) {
    program
      .command(action.name)
      .argument('[participant]', 'name or id (asked for on a terminal)')
      .usage('PARTICIPANT [--space SPACE]')
      .summary(action.summary)
      .option('-s, --space <space>', 'name or id (default: the default space)')
      .addHelpText(
        'after',
        examples(`convene ${action.name} Ada`, `convene ${action.name} 9b1c --space "Release plan"`),
      )
      .action(async (reference, options, command) => {
        const ctx = app.context(command);
        const saved = ctx.space(options.space);
        ctx.requireOwner(saved, action.name);
        const space = ctx.spaceClient(saved);
        const { participants } = await space.get();
        const chosen = await choose(ctx.out, reference, {
          message: `Who do you want to ${action.name}?`,
          usage: `convene ${action.name} PARTICIPANT [--space SPACE]`,
          items: participants.filter(
            (p) => !p.isOwner && (action.candidates as readonly string[]).includes(p.status),
          ),
          id: (p) => p.participantId,
          label: (p) => `${p.name} (${p.status})`,
        });
        const participant = pick(participants, chosen, {
          noun: 'participant',
          id: (p) => p.participantId,
          name: (p) => p.name,
          listCommand: 'convene participants',
        });
        const result = await space.participants[action.call](participant.participantId);
        ctx.out.result(
          { ...result, participantId: participant.participantId },
          {
            quiet: () => participant.participantId,
            human: () =>
              ctx.out.success(`${action.done} ${ctx.out.c.bold(participant.name)} in ${saved.name}`),
          },
        );
      });
  }
}
