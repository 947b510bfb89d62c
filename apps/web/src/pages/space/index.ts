// /space/{spaceId}: messages live, participants and moderation, documents with lock, edit, save
// and history. The space key comes from this tab's sessionStorage (put there by the join page,
// the home page or the dashboard), or is pasted; never from the URL. This module opens the space
// and wires the parts: participants.ts, messages.ts, documents.ts, editor.ts, stream.ts.
import { AuthenticationError, type SpaceView } from '@convene/sdk';
import { $, busy, confirmed, notify, renderSessionNav, submitButton, wireCopyButtons } from '../../lib/dom';
import { describeError } from '../../lib/errors';
import { sessionOf } from '../../lib/hub';
import { fragmentParams, isSpaceId, NO_SUCH_SPACE } from '../../lib/space-id';
import {
  forgetSpaceCredentials,
  getSession,
  getSpaceCredentials,
  isRemembered,
  logOut,
  type SpaceCredentials,
  setInvitation,
  setSpaceCredentials,
} from '../../lib/storage';
import { renderArtifacts, wireDocuments } from './documents';
import { renderTimeLeft, wireHeader } from './header';
import { wireMessages } from './messages';
import { renderParticipants } from './participants';
import { myself, rememberMe, space, spaceId, state } from './state';
import { connectStream, endSpace, sayMuted } from './stream';

renderSessionNav();
wireCopyButtons();
wireHeader();
wireMessages();
wireDocuments();

/** Whose key `me` is, as the space says (its `you`): the owner, a participant, or an invitation. */
function identify(me: SpaceCredentials, view: SpaceView): SpaceCredentials | 'invitation' {
  const { role, participantId } = view.you;
  if (role === 'invitation') return 'invitation';
  const name = participantId ? state.participants.get(participantId)?.name : undefined;
  return { ...me, role, participantId, ...(name !== undefined ? { name } : {}) };
}

let ticking: ReturnType<typeof setInterval> | undefined;

/** Opens the space with `me`'s key; `kept`: the key this tab kept, not one just given. */
async function open(me: SpaceCredentials, kept = false): Promise<void> {
  state.me = me;
  let view: SpaceView;
  try {
    view = await space().get();
  } catch (error) {
    showNoKey(describeError(error));
    if (!(error instanceof AuthenticationError)) return;
    if (kept) forgetSpaceCredentials(spaceId, false);
    // A closed space opens to no key: the notice says so, and nothing offers one.
    if (/^space_(closed|expired)$/.test(error.code ?? '')) $('no-key').hidden = true;
    else if (kept)
      $('no-key-text').textContent =
        'The key kept for this space no longer opens it. Paste another key, use the invitation link you were given, or fetch your key from your dashboard.';
    return;
  }
  state.space = view;
  state.participants = new Map(view.participants.map((p) => [p.participantId, p]));
  const known = identify(me, view);
  if (known === 'invitation') {
    setInvitation(spaceId, { key: me.key });
    location.assign(`/join/${encodeURIComponent(spaceId)}`);
    return;
  }
  rememberMe(known);
  state.artifacts = new Map(view.artifacts.map((a) => [a.id, a]));
  $('no-key').hidden = true;
  $('space-layout').hidden = false;
  notify('space-notice', '');
  renderParticipants();
  renderArtifacts();
  sayMuted();
  if (view.state === 'closed') {
    endSpace('This space has closed.');
    return;
  }
  void connectStream();
  // Joined (or opened): the keyboard goes where the conversation is written, when the eye can
  // follow it there. Below the window (a phone, a zoomed page), typing went into a box out of
  // sight, and a screen reader began past the space's name and the messages: the page's start.
  const composer = $('message-content');
  const { top, bottom } = composer.getBoundingClientRect();
  if (top >= 0 && bottom <= window.innerHeight) composer.focus({ preventScroll: true });
  // The time left counts down by the second, from when the server said it.
  const endsAt = Date.now() + view.ttlRemaining * 1000;
  clearInterval(ticking);
  ticking = setInterval(() => {
    view.ttlRemaining = Math.max(0, Math.ceil((endsAt - Date.now()) / 1000));
    renderTimeLeft();
  }, 1000);
}

function showNoKey(problem?: string): void {
  $('no-key').hidden = false;
  $('space-layout').hidden = true;
  $('live').textContent = '';
  if (problem) notify('space-notice', problem);
  $('recover-key').hidden = !getSession();
  // Logged out: logging in comes back here, where the dashboard's key is then a click away.
  $('no-key-login').hidden = !!getSession();
  $('no-key-login').setAttribute('href', `/login?next=${encodeURIComponent(location.pathname)}`);
}

const keyForm = $('key-form', HTMLFormElement);
keyForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  let key = $('key-input', HTMLInputElement).value.trim();
  let participantId: string | undefined;
  // A link pasted whole (the link back, an invitation's link for a human or an agent): the key in
  // its fragment or query. No key holds a slash.
  const linked = /\/(?:space|join)\/([^/?#]+)/.exec(key);
  if (linked) {
    if (linked[1]?.toLowerCase() !== spaceId.toLowerCase()) {
      notify('space-notice', 'This link is to another space: open it in the address bar instead.');
      return;
    }
    const params = new URLSearchParams(key.split(/[?#]/).slice(1).join('&'));
    key = params.get('key')?.trim() ?? '';
    participantId = params.get('participant') ?? undefined;
    if (!key)
      notify('space-notice', 'This link holds no key: paste the key, or the whole link with its #key=….');
  }
  // An invitation's key (a link to join) goes on to the join page, as `open` learns.
  if (key) await busy(submitButton(keyForm), () => open({ key, participantId }));
});

$('recover-key').addEventListener('click', (event) =>
  busy(event.currentTarget, async () => {
    const session = getSession();
    if (!session) return;
    try {
      const account = sessionOf(session);
      const key = await account.spaceKey(spaceId);
      const { spaces } = await account.spaces();
      const entry = spaces.find((s) => s.spaceId === spaceId && s.role === key.role);
      await open({ key: key.privateKey, role: key.role, participantId: entry?.participantId });
    } catch (error) {
      if (error instanceof AuthenticationError) {
        // The session, not a space key, was refused.
        logOut();
        renderSessionNav();
        $('recover-key').hidden = true;
        $('no-key-login').hidden = false;
        notify('space-notice', 'Your session has expired. Log in again to use the keys of your dashboard.');
        return;
      }
      notify('space-notice', describeError(error, 'your key for this space'));
    }
  }),
);

// --- Owner and participant actions -------------------------------------------------------------

$('invite-button').addEventListener('click', (event) =>
  busy(event.currentTarget, async () => {
    try {
      const invitation = await space().invitations.create();
      $('invite-human', HTMLInputElement).value = invitation.humanLink;
      $('invite-agent', HTMLInputElement).value = invitation.agentLink;
      $('invite-result').hidden = false;
      $('invite-human', HTMLInputElement).select();
    } catch (error) {
      notify('space-notice', describeError(error));
    }
  }),
);

$('leave-button').addEventListener('click', (event) =>
  busy(event.currentTarget, async () => {
    if (!confirmed('Leave this space? Your key stops working and you would need a new invitation.')) return;
    try {
      await space().leave();
      forgetSpaceCredentials(spaceId);
      // The stream that would have said so ends here.
      const me = myself();
      if (me) state.participants.set(me.participantId, { ...me, status: 'left' });
      endSpace('You left this space.', 'ok');
      focusNotice();
    } catch (error) {
      notify('space-notice', describeError(error));
    }
  }),
);

/**
 * The space's notice, focused: said where the eye and the keyboard are, when the button pressed
 * is gone (Leave, Close the space), and on a phone the notice at the top is out of sight.
 */
function focusNotice(): void {
  const notice = $('space-notice');
  notice.tabIndex = -1;
  notice.focus();
}

$('close-space-button').addEventListener('click', (event) =>
  busy(event.currentTarget, async () => {
    if (!confirmed('Close this space for everyone? This cannot be undone.')) return;
    try {
      await space().close();
      // This tab's stream ends here, before it tells of the close.
      endSpace('You closed this space.', 'ok');
      focusNotice();
    } catch (error) {
      notify('space-notice', describeError(error));
    }
  }),
);

// --- Keeping access: the key is this tab's; a link back, or this device, can keep it -------------

const keep = $('keep-access', HTMLDetailsElement);
function renderKeep(): void {
  const remembered = isRemembered(spaceId);
  $('remember').hidden = remembered;
  $('remembered').hidden = !remembered;
}
// The key reaches the page's text only when asked for.
keep.addEventListener('toggle', () => {
  if (!keep.open) return;
  const { key, participantId } = state.me;
  $('personal-link', HTMLInputElement).value =
    `${location.origin}/space/${spaceId}#key=${key}${participantId ? `&participant=${participantId}` : ''}`;
  $('my-key', HTMLInputElement).value = key;
  renderKeep();
});
$('remember').addEventListener('click', () => {
  try {
    setSpaceCredentials(spaceId, state.me, true);
  } catch {
    notify('space-notice', 'This browser keeps nothing for the page: keep your link back instead.');
  }
  renderKeep();
  keepFocusIn();
});
$('forget').addEventListener('click', () => {
  forgetSpaceCredentials(spaceId, false);
  renderKeep();
  keepFocusIn();
});
/**
 * The button pressed (Remember, Forget it) is hidden: the keyboard goes to the one in its place,
 * and what this browser now keeps is said (the paragraph that appears is no live region).
 */
function keepFocusIn(): void {
  const remembered = isRemembered(spaceId);
  $(remembered ? 'forget' : 'remember').focus();
  $('keep-status').textContent = remembered
    ? 'This browser remembers your key for this space.'
    : 'This browser no longer remembers your key.';
}

// A link back carries the key in its fragment, which leaves the address bar at once.
const fragment = fragmentParams();
const given = fragment.get('key')?.trim();
if (given) history.replaceState(null, '', location.pathname);
const kept = getSpaceCredentials(spaceId);
if (!isSpaceId(spaceId)) {
  $('live').textContent = '';
  notify('space-notice', NO_SUCH_SPACE);
} else if (given) void open({ key: given, participantId: fragment.get('participant') ?? undefined });
else if (kept) void open(kept, true);
else showNoKey();
