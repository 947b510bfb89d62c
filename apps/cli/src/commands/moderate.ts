import type { Command } from '@commander-js/extra-typings';
import { ConflictError } from '@convene/sdk';
import { type App, examples } from '../app';
import { conflictError, isSpaceClosed } from '../lib/failure';
import { choose } from '../lib/prompts';
import { find, pick } from '../lib/resolve';

const STATUS = {
  waitingForApproval: 'waiting for approval',
  active: 'active',
  muted: 'muted',
  left: 'gone (left)',
  kicked: 'removed (kicked)',
} as const;

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
        const candidates = participants.filter(
          (p) => !p.isOwner && (action.candidates as readonly string[]).includes(p.status),
        );
        const chosen = await choose(ctx.out, reference, {
          message: `Participant to ${action.name}`,
          usage: `convene ${action.name} PARTICIPANT [--space SPACE]`,
          items: candidates,
          id: (p) => p.participantId,
          label: (p) => `${p.name} (${p.status})`,
        });
        const what = {
          noun: 'participant',
          id: (p: (typeof participants)[number]) => p.participantId,
          name: (p: (typeof participants)[number]) => p.name,
          listCommand: 'convene participants',
        };
        // A name shared with someone this cannot apply to (a kicked namesake) names the one it can.
        const participant = find(candidates, chosen, what) ?? pick(participants, chosen, what);
        let result: { ok: boolean };
        try {
          result = await space.participants[action.call](participant.participantId);
        } catch (error) {
          if (!(error instanceof ConflictError) || isSpaceClosed(error)) throw error;
          // Not "the state changed": where the participant stands is why.
          throw conflictError(
            error,
            participant.isOwner
              ? 'The owner of a space cannot be moderated.'
              : `${participant.name} is ${STATUS[participant.status]}; only participants who are ${listed(
                  action.candidates.map((status) => STATUS[status]),
                )} can be ${action.done.toLowerCase()} (see \`convene participants\`).`,
          );
        }
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

/** "a", "a or b", "a, b or c". */
const listed = (items: readonly string[]): string =>
  items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
