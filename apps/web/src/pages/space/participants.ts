// Participants: who is here, their status, and the owner's moderation (approve, mute, unmute,
// remove), which the stream then reports back to every tab.
import type { ParticipantView } from '@convene/sdk';
import { avatar } from '../../lib/avatar';
import { shownName } from '../../lib/bidi';
import { $, busy, confirmed, el, isolated, notify, replaceItems } from '../../lib/dom';
import { describeError } from '../../lib/errors';
import { STATUS_LABELS } from '../../lib/format';
import { renderSpace } from './header';
import { isOwner, space, state } from './state';

type Moderation = 'approve' | 'reject' | 'kick' | 'mute' | 'unmute';

const STATUS_ORDER: Record<ParticipantView['status'], number> = {
  waitingForApproval: 0,
  active: 1,
  muted: 2,
  left: 3,
  kicked: 4,
};

function moderationButtons(p: ParticipantView): HTMLElement | undefined {
  if (!isOwner() || p.isOwner || state.ended) return undefined;
  const actions: [Moderation, string, string][] = [];
  if (p.status === 'waitingForApproval') actions.push(['approve', 'Approve', 'primary']);
  if (p.status === 'active') actions.push(['mute', 'Mute', '']);
  if (p.status === 'muted') actions.push(['unmute', 'Unmute', '']);
  // Refusing is the kick the server keeps to joiners still waiting: never someone another tab
  // of the owner admitted meanwhile.
  if (p.status === 'waitingForApproval') actions.push(['reject', 'Refuse', 'danger']);
  if (p.status === 'active' || p.status === 'muted') actions.push(['kick', 'Remove', 'danger']);
  if (!actions.length) return undefined;
  return el(
    'div',
    { class: 'moderation' },
    actions.map(([action, label, kind]) =>
      el(
        'button',
        {
          type: 'button',
          class: `small ${kind}`,
          'aria-label': `${label} ${p.name}`,
          onclick: (event) => moderate(event.currentTarget, p, action),
        },
        label,
      ),
    ),
  );
}

async function moderate(button: EventTarget | null, participant: ParticipantView, action: Moderation) {
  // A joiner still waiting was never in and holds no key: the owner refuses a request.
  const question =
    action === 'reject'
      ? `Refuse ${shownName(participant.name)}’s request to join the space?`
      : `Remove ${shownName(participant.name)} from the space? Their key stops working.`;
  if ((action === 'kick' || action === 'reject') && !confirmed(question)) return;
  await busy(button, async () => {
    try {
      await space().participants[action](participant.participantId);
      // The request leaves the list (neverTookPart): said, so that it does not just vanish.
      notify(
        'space-notice',
        action === 'reject' ? `${shownName(participant.name)}’s request to join was refused.` : '',
        'ok',
      );
    } catch (error) {
      notify('space-notice', describeError(error, 'this participant'));
    }
  });
}

/**
 * Removed before their key was ever used (the server saw them never): a request to join the
 * owner refused, most often, which the server keeps as `kicked`. Never in the space, they are not
 * listed as someone removed from it.
 */
const neverTookPart = (p: ParticipantView) => p.status === 'kicked' && p.lastSeenAt === undefined;

export function renderParticipants(): void {
  const people = [...state.participants.values()]
    .filter((p) => !neverTookPart(p))
    .sort(
      (a, b) =>
        Number(b.isOwner) - Number(a.isOwner) ||
        STATUS_ORDER[a.status] - STATUS_ORDER[b.status] ||
        a.name.localeCompare(b.name),
    );
  replaceItems(
    $('participants'),
    people.map((p) => {
      const gone = p.status === 'left' || p.status === 'kicked';
      return el(
        'li',
        { class: gone ? 'gone' : '', dataset: { participantId: p.participantId, key: p.participantId } },
        avatar(p),
        el(
          'div',
          {},
          el(
            'div',
            { class: 'person-name' },
            isolated(p.name),
            p.participantId === state.me.participantId && ' (you)',
          ),
          // The owner's role defaults to "owner", which its badge already says.
          p.role &&
            !(p.isOwner && p.role === 'owner') &&
            el('div', { class: 'person-role' }, shownName(p.role)),
          el(
            'div',
            { class: 'person-badges' },
            p.isOwner && el('span', { class: 'badge owner' }, 'owner'),
            el('span', { class: `badge ${p.status}` }, STATUS_LABELS[p.status]),
            el('span', { class: 'badge' }, p.isHuman ? 'human' : 'agent'),
          ),
          moderationButtons(p),
        ),
      );
    }),
    $('people-title'),
  );
  renderSpace();
}

/** The stream's news of one participant; the caller decides what it means for this tab. */
export function participantChanged(participant: ParticipantView): void {
  state.participants.set(participant.participantId, participant);
  renderParticipants();
}
