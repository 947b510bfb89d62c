// The space's header and the "You" panel: name, state, privacy, time left, and the actions this
// key may take (invite and close for the owner, leave for a participant).

import { shownName, shownText } from '../../lib/bidi';
import { $, el, isolated } from '../../lib/dom';
import { formatDuration, STATUS_LABELS } from '../../lib/format';
import { isOwner, myself, state } from './state';

export function renderSpace(): void {
  const { space } = state;
  if (!space) return;
  const name = shownName(space.name);
  $('space-title').textContent = name;
  const waiting = renderJoinRequests();
  document.title = `${waiting ? `(${waiting} waiting) ` : ''}${name} · Convene`;
  const description = $('space-description');
  const text = shownText(space.description);
  if (description.textContent !== text) description.textContent = text;
  const toggle = $('description-toggle');
  // Offered only when the clamp hides something (or the whole text is shown).
  toggle.hidden =
    description.classList.contains('clamped') && description.scrollHeight <= description.clientHeight + 1;
  if (space.agenda) {
    $('space-agenda').textContent = shownText(space.agenda);
    $('agenda-block').hidden = false;
  }
  const closed = state.ended || space.state === 'closed';
  const me = myself();
  // A tab removed from the space, or that left it, says so: the space goes on for the others.
  const gone = me?.status === 'kicked' || me?.status === 'left' ? me.status : undefined;
  const badge = $('space-state');
  badge.textContent = gone ? STATUS_LABELS[gone] : closed ? 'closed' : 'open';
  badge.className = `badge ${gone ?? (closed ? 'closed' : 'open')}`;
  $('space-privacy').textContent = space.privacy === 'private' ? '· private' : '· public';
  renderTimeLeft();
  // The forms that write (a message, a new document) are open only while this tab may write.
  const readOnly = state.ended || me?.status === 'muted';
  for (const id of ['send-fields', 'artifact-fields']) $(id, HTMLFieldSetElement).disabled = readOnly;
  // Nor does a message offer a reply.
  $('messages').classList.toggle('read-only', readOnly);
  $('invite-button').hidden = !isOwner() || closed;
  $('keep-access').hidden = closed;
  $('close-space-button').hidden = !isOwner() || closed;
  $('leave-button').hidden = isOwner() || closed || !state.me.participantId;
  const mine = me?.name ?? state.me.name;
  $('you').replaceChildren(
    mine ? el('strong', {}, isolated(mine)) : 'You',
    isOwner() ? ' · owner of this space' : state.me.role === 'participant' ? ' · participant' : '',
    me ? ' ' : '',
    me ? el('span', { class: `badge ${me.status}` }, STATUS_LABELS[me.status]) : '',
  );
}

/**
 * The owner hears of a request to join at the top of the page (and in the tab's title), politely
 * to a screen reader: on a phone its Approve button is far below, under the messages. The button
 * takes the keyboard there. Returns how many wait.
 */
function renderJoinRequests(): number {
  const waiting = waitingForApproval();
  const region = $('join-requests');
  const text = waiting.length ? `${waiting.length} waiting for approval` : '';
  // Said once: the header is redrawn on every change of the space, its text only when it changes.
  if (region.textContent === text) return waiting.length;
  region.replaceChildren(
    waiting.length
      ? el(
          'button',
          {
            type: 'button',
            class: 'small primary',
            onclick: () => {
              // Who waits now: the button is drawn again only when the count changes.
              const first = waitingForApproval()[0]?.participantId ?? '';
              const approve = $('participants').querySelector<HTMLElement>(
                `li[data-participant-id="${CSS.escape(first)}"] button`,
              );
              approve?.scrollIntoView({ block: 'center' });
              approve?.focus({ preventScroll: true });
            },
          },
          text,
        )
      : '',
  );
  return waiting.length;
}

/** The participants waiting for the owner's approval, for the owner (nobody for anyone else). */
function waitingForApproval() {
  return isOwner() && !state.ended && state.space?.state !== 'closed'
    ? [...state.participants.values()].filter((p) => p.status === 'waitingForApproval')
    : [];
}

/** The space's time left, as the clock runs (`ttlRemaining` counted down by the page). */
export function renderTimeLeft(): void {
  const { space } = state;
  $('space-ttl').textContent =
    !space || state.ended || space.state === 'closed' ? '' : `· ${formatDuration(space.ttlRemaining)}`;
}

/** The description's toggle: a few lines, or all of it. */
export function wireHeader(): void {
  $('description-toggle').addEventListener('click', (event) => {
    const clamped = $('space-description').classList.toggle('clamped');
    const toggle = event.currentTarget as HTMLElement;
    toggle.textContent = clamped ? 'Show the whole description' : 'Show less';
    toggle.setAttribute('aria-expanded', String(!clamped));
  });
}
