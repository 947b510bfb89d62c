import { type Command, Option } from '@commander-js/extra-typings';
import { ConflictError } from '@convene/sdk';
import { type App, examples } from '../app';
import { CliError, isSpaceClosed } from '../lib/errors';
import { ExitCode } from '../lib/exit-codes';
import { conflictError } from '../lib/failure';
import { inline } from '../lib/output';
import { choose, confirm } from '../lib/prompts';
import type { Value } from '../lib/quote';
import { listed } from '../lib/render';
import { find, findExact, hintName, participantNaming, pick, sameName } from '../lib/resolve';
import { suggest } from '../lib/suggest';

/**
 * Where a participant already stands, for the verb that finds its work done: in the API's word
 * for the status (`kicked`, not "removed"), as `participants` and --json show it.
 */
const ALREADY = {
  waitingForApproval: (space: string) => `is already waitingForApproval in ${space}`,
  active: (space: string) => `is already active in ${space}`,
  muted: (space: string) => `is already muted in ${space}`,
  left: (space: string) => `already left ${space}`,
  kicked: (space: string) => `was already kicked from ${space}`,
} as const;

/** What a terminal asks before refusing a request to join: `reject`, or `kick` of someone waiting. */
const refuseQuestion = (who: string, space: string) => `Refuse ${who}’s request to join ${space}?`;

/**
 * The owner's moderation verbs share one shape: a participant, by name, the start of one (`ada`
 * for Ada Lovelace, when no one else's starts so) or id. `reject` is `kick`
 * kept to those waiting for approval, under the name a person looks for to refuse a request.
 * `already`: the standings in which the verb is already done (the server answers 409): said so,
 * exit 0, as for every command that finds its work done. `confirm`: what a terminal asks before
 * the verb, which cannot be undone (the key of whoever is removed stops working; joining again
 * makes a new participant); --yes, or no terminal, acts without asking.
 */
const ACTIONS = [
  {
    name: 'approve',
    summary: 'admit someone waiting to join a private space (owner)',
    description:
      'Admit a participant waiting to join your private space (`convene participants` shows them ' +
      'as waiting): their `convene join` finishes with their key. Only the owner can; ' +
      '`convene reject` refuses instead.',
    done: 'Approved',
    where: 'in',
    call: 'approve',
    candidates: ['waitingForApproval'],
    already: ['active', 'muted'],
  },
  {
    name: 'reject',
    summary: 'refuse someone waiting to join a private space (owner)',
    description:
      'Refuse a participant waiting to join your private space: their `convene join` stops, ' +
      'saying the owner refused the request (they may ask again). Only the owner can; it is ' +
      '`convene kick` of someone still waiting, which never removes someone admitted meanwhile. ' +
      'On a terminal it asks first (--yes does not).',
    done: 'Refused',
    where: 'in',
    call: 'reject',
    candidates: ['waitingForApproval'],
    already: ['kicked', 'left'],
    confirm: refuseQuestion,
  },
  {
    name: 'kick',
    summary: 'remove a participant; their key stops working (owner)',
    description:
      'Remove a participant (active or muted): their key stops working at once, for reading as ' +
      'well as sending, and their edit locks are released; joining again makes a new participant. ' +
      'Kicking someone still waiting for approval refuses their request, as `convene reject` ' +
      'does. Only the owner can, and the owner cannot be removed. On a terminal it asks first ' +
      '(--yes does not).',
    done: 'Removed',
    where: 'from',
    call: 'kick',
    candidates: ['active', 'muted', 'waitingForApproval'],
    already: ['kicked', 'left'],
    confirm: (who: string, space: string) => `Remove ${who} from ${space}? Their key stops working at once.`,
  },
  {
    name: 'mute',
    summary: 'stop a participant from sending; they still read (owner)',
    description:
      'Stop an active participant from sending messages, creating documents and taking locks; ' +
      'they still read and follow the space, and may finish an edit under a lock they already ' +
      'hold. Only the owner can; `convene unmute` gives them their voice back.',
    done: 'Muted',
    where: 'in',
    call: 'mute',
    candidates: ['active'],
    already: ['muted'],
  },
  {
    name: 'unmute',
    summary: 'let a muted participant send again (owner)',
    description: 'Let a muted participant send messages again. Only the owner can.',
    done: 'Unmuted',
    where: 'in',
    call: 'unmute',
    candidates: ['muted'],
    already: ['active'],
  },
] as const;

interface Moderated {
  participantId: string;
  name: string;
  status: string;
}

/**
 * Whom a moderation verb's PARTICIPANT names. An id, or a whole name (any case), names that
 * participant wherever they stand, before any name start is tried: `kick bob` with Bob kicked and
 * Bobby active is Bob (already kicked), never Bobby. Of several of that name, the one the verb
 * applies to (`candidates`: not a kicked namesake), else one still in the space (not gone). An
 * id start names one the verb applies to first. Only when nobody has that name does the start of
 * a name name someone: one of those still in the space, whether or not the verb applies to them
 * (`mute ada` with Adam muted is ambiguous, not Ada Lovelace by elimination); else anyone, to say
 * where they stand.
 */
export function moderated<P extends Moderated>(
  participants: readonly P[],
  candidates: readonly P[],
  reference: string,
  listCommand: string,
  where?: string,
): P {
  const what = { ...participantNaming, listCommand, ...(where === undefined ? {} : { where }) };
  const byStart = { ...what, byNameStart: true };
  const present = participants.filter((p) => p.status !== 'left' && p.status !== 'kicked');
  // Namesakes all gone, and gone the same way (both kicked): whichever is named, the verb finds
  // the same standing (`was already kicked`), where asking which would be no help.
  const gone = participants.filter((p) => !present.includes(p) && sameName(p.name, reference));
  const alike = gone.length > 1 && gone.every((p) => p.status === gone[0]!.status) ? gone[0] : undefined;
  return (
    find(candidates, reference, what) ??
    findExact(present, reference, what) ??
    alike ??
    findExact(participants, reference, what) ??
    find(present, reference, byStart) ??
    pick(participants, reference, byStart)
  );
}

/** Those a moderation verb applies to: not the owner, and in one of the verb's standings. */
function candidatesOf<P extends Moderated & { isOwner: boolean }>(
  verb: Verb,
  participants: readonly P[],
): P[] {
  const action = ACTIONS.find((a) => a.name === verb)!;
  return participants.filter(
    (p) => !p.isOwner && (action.candidates as readonly string[]).includes(p.status),
  );
}

type Verb = (typeof ACTIONS)[number]['name'];

/**
 * `participant` as the command line `convene VERB …` of a hint names it: by name when the verb,
 * given that name, would act on them (`moderated`), else by id (another of the name stands
 * before them).
 */
export function moderationTarget<P extends Moderated & { isOwner: boolean }>(
  verb: Verb,
  participants: readonly P[],
  participant: P,
): Value {
  const candidates = candidatesOf(verb, participants);
  return hintName(participant, participantNaming, (typed) => moderated(participants, candidates, typed, ''));
}

export function registerModeration(program: Command, app: App): void {
  for (const action of ACTIONS) {
    const asks = 'confirm' in action;
    const usage = `PARTICIPANT [--space SPACE]${asks ? ' [--yes]' : ''}`;
    const verb = program
      .command(action.name)
      .argument('[participant]', 'name, the start of one, or id (asked for on a terminal)')
      .usage(usage)
      .summary(action.summary)
      .description(action.description)
      .option('-s, --space <space>', 'name or id (default: the default space)');
    if (asks) verb.addOption(new Option('-y, --yes', 'do not ask for confirmation'));
    verb
      .addHelpText(
        'after',
        examples(
          `convene ${action.name} Ada`,
          `convene ${action.name} 9b1c --space "Release plan"${asks ? ' --yes' : ''}`,
        ),
      )
      .action(async (reference, options, command) => {
        const ctx = app.context(command);
        const saved = ctx.space(options.space);
        await ctx.requireOwner(saved, action.name);
        const space = ctx.spaceClient(saved);
        const { participants } = await ctx.readSpace(space);
        const candidates = candidatesOf(action.name, participants);
        const chosen = await choose(ctx.out, reference, {
          message: `Participant to ${action.name}`,
          usage: `convene ${action.name} ${usage}`,
          items: candidates,
          id: (p) => p.participantId,
          label: (p) => `${p.name} (${p.status})`,
          // Asked on a terminal with nobody the verb applies to: said plainly, not as a usage error.
          none: () =>
            new CliError(`nobody to ${action.name} in ${saved.name}`, {
              exitCode: ExitCode.notFound,
              hint: `Only participants whose status is ${listed(action.candidates)} can be ${action.done.toLowerCase()}, and there are none (see \`${suggest(ctx, 'participants')}\`).`,
            }),
        });
        const participant = moderated(
          participants,
          candidates,
          chosen,
          suggest(ctx, 'participants'),
          saved.name,
        );
        if (participant.isOwner) {
          // Said once, here: the server's 409 would say the same again as its message.
          throw new CliError('the owner of a space cannot be moderated', {
            exitCode: ExitCode.conflict,
            // Removing them, or refusing them, is what closing the space does for everyone.
            ...(action.name === 'kick' || action.name === 'reject'
              ? { hint: `To end the space for everyone, \`${suggest(ctx, 'space close')}\`.` }
              : {}),
          });
        }
        // What to run to remove them instead, where a refusal does not apply to them.
        const kickInstead = () =>
          `To remove them, \`${suggest(ctx, 'kick', { args: [moderationTarget('kick', participants, participant)] })}\`.`;
        // Not "the state changed": where the participant stands is why.
        const standing = `${participant.name}’s status is ${participant.status}; only participants whose status is ${listed(
          action.candidates,
        )} can be ${action.done.toLowerCase()} (see \`${suggest(ctx, 'participants')}\`).`;
        if ((action.already as readonly string[]).includes(participant.status)) {
          // A refusal is recorded as `kicked`, as a removal is: `reject` cannot tell which it was.
          const already =
            action.name === 'reject' && participant.status === 'kicked'
              ? `was already refused or removed from ${saved.name} (status kicked)`
              : ALREADY[participant.status](saved.name);
          ctx.out.result(
            { ok: true, participantId: participant.participantId, unchanged: true },
            {
              quiet: () => participant.participantId,
              human: () => ctx.out.info(`${ctx.out.c.bold(participant.name)} ${already}; nothing changed.`),
            },
          );
          return;
        }
        // `reject` is a kick kept to those waiting: someone admitted is said so before asking.
        if (action.name === 'reject' && !candidates.includes(participant)) {
          throw new CliError(`${participant.name} is not waiting for approval`, {
            exitCode: ExitCode.conflict,
            hint: `${standing} ${kickInstead()}`,
          });
        }
        if ('confirm' in action) {
          // Asked, on a terminal, of the one the name resolved to: a picked or typed name alike.
          const who = inline(participant.name);
          await confirm(
            ctx.out,
            (participant.status === 'waitingForApproval' ? refuseQuestion : action.confirm)(
              who,
              inline(saved.name),
            ),
            (options as { yes?: boolean }).yes,
          );
        }
        let result: { ok: boolean };
        try {
          result = await space.participants[action.call](participant.participantId);
        } catch (error) {
          if (!(error instanceof ConflictError) || isSpaceClosed(error)) throw error;
          // Admitted since the read above (the owner approved them elsewhere): the server refused
          // the refusal, and they stay.
          const now = error.participantStatus;
          if (action.name === 'reject' && (now === 'active' || now === 'muted'))
            throw conflictError(
              error,
              `${participant.name} was admitted meanwhile and stays (status ${now}). ${kickInstead()}`,
              `${participant.name} is no longer waiting for approval; nothing refused`,
            );
          throw conflictError(error, standing);
        }
        // `kick` of someone still waiting refused their request, as `reject` does: said so.
        const refused =
          participant.status === 'waitingForApproval' && (action.call === 'kick' || action.call === 'reject');
        ctx.out.result(
          { ...result, participantId: participant.participantId },
          {
            quiet: () => participant.participantId,
            human: () =>
              ctx.out.success(
                refused
                  ? `Refused ${ctx.out.c.bold(participant.name)}’s request to join ${saved.name}`
                  : `${action.done} ${ctx.out.c.bold(participant.name)} ${action.where} ${saved.name}`,
              ),
          },
        );
      });
  }
}
