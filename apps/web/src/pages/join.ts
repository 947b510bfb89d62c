// /join/{spaceId}#key=…: the invitation key travels in the fragment, so it never reaches the
// server's logs. The page shows the space, joins, waits for approval in a private space, then
// opens the space page with the participant key kept in this tab's sessionStorage. A join that
// waits is kept by the browser (storage.ts): the same link opened again, even after its tab was
// closed, goes on waiting for that request rather than making another.
import { PendingJoin, type SpaceView } from '@convene/sdk';
import { avatar } from '../lib/avatar';
import { shownName, shownText } from '../lib/bidi';
import { $, busy, el, isolated, notify, pause, renderSessionNav, submitButton } from '../lib/dom';
import { describeError, joinEnded, keyEnded, statusOf } from '../lib/errors';
import { formatDuration } from '../lib/format';
import { browserUserToken, hub, hubAs } from '../lib/hub';
import { fragmentParams, isSpaceId, NO_SUCH_SPACE } from '../lib/space-id';
import {
  forgetInvitation,
  getInvitation,
  getSession,
  getSpaceCredentials,
  type Invitation,
  type SpaceCredentials,
  setInvitation,
  setSpaceCredentials,
} from '../lib/storage';

renderSessionNav();

const spaceId = $('page').dataset.spaceId ?? '';
const spacePath = `/space/${encodeURIComponent(spaceId)}`;
const session = getSession();
let pollInterval = 2000;
/** When the space ends, as its view said: a waiting join kept by the browser is of no use after. */
let endsAt: string | undefined;

const fragmentKey = fragmentParams().get('key')?.trim() || undefined;
if (fragmentKey) {
  if (getInvitation(spaceId)?.key !== fragmentKey) setInvitation(spaceId, { key: fragmentKey });
  // Out of the address bar (and of screenshots and shared screens); the tab keeps it.
  history.replaceState(null, '', location.pathname);
}
const invitation: Invitation | undefined = getInvitation(spaceId);

function goToSpace(credentials: SpaceCredentials): void {
  setSpaceCredentials(spaceId, credentials);
  forgetInvitation(spaceId);
  location.assign(spacePath);
}

function showSpace(space: SpaceView): void {
  const name = shownName(space.name);
  $('space-title').textContent = name;
  document.title = `Join ${name} · Convene`;
  $('space-description').textContent = shownText(space.description);
  if (space.agenda) {
    $('space-agenda').textContent = shownText(space.agenda);
    $('space-agenda-block').hidden = false;
  }
  $('space-privacy').textContent =
    space.privacy === 'private' ? 'Private: the owner approves each joiner' : 'Public: you join at once';
  $('space-ttl').textContent = formatDuration(space.ttlRemaining);
  const here = space.participants.filter((p) => p.status === 'active' || p.status === 'muted');
  $('space-participants').replaceChildren(
    ...(here.length
      ? here.map((p) =>
          el(
            'li',
            {},
            avatar(p, true),
            el(
              'span',
              {},
              isolated(p.name),
              p.isOwner && ' (owner)',
              p.role && p.role !== 'owner' && ` · ${shownName(p.role)}`,
            ),
          ),
        )
      : [el('li', { class: 'empty' }, 'Nobody yet')]),
  );
  pollInterval = space.suggestedPollingIntervalMs || pollInterval;
  endsAt = new Date(Date.now() + space.ttlRemaining * 1000).toISOString();
  $('space-info').hidden = false;
}

async function waitForApproval(pending: PendingJoin, name: string | undefined): Promise<void> {
  $('join-section').hidden = true;
  $('waiting').hidden = false;
  // The form pressed is gone: the keyboard, and a screen reader, go to what the page says now.
  $('waiting-title').focus();
  for (;;) {
    try {
      const approved = await pending.check();
      if (approved) {
        notify('join-notice', 'Approved. Opening the space…', 'ok');
        goToSpace({ key: approved.key, participantId: pending.participantId, role: 'participant', name });
        return;
      }
      notify('join-notice', '');
    } catch (error) {
      // A refusal (kicked while waiting), a closed space, or a key already handed out ends the
      // wait; a hiccup does not.
      const status = statusOf(error);
      if (status === 401 || status === 404 || status === 409 || (status !== undefined && status < 400)) {
        $('waiting').hidden = true;
        forgetInvitation(spaceId);
        // A join this tab made and waited on is no longer pending: the owner refused it, or
        // another tab took its key; or the space is gone.
        notify('join-notice', joinEnded(error));
        return;
      }
      notify('join-notice', `${describeError(error)} Still trying…`, 'warn');
    }
    await pause(pollInterval);
  }
}

/**
 * An invitation key the space refuses (not one of a space that ended, which `describeError` says),
 * said as a link cut short or mistyped, and forgotten: the tab would try it again on every visit.
 */
function refusal(error: unknown): string | undefined {
  if (statusOf(error) !== 401 || keyEnded(error)) return undefined;
  forgetInvitation(spaceId);
  return 'This invitation link does not open the space: it may have been cut short or mistyped. Open the whole link you were sent, or ask the owner for a new one.';
}

const pendingJoin = (invitation: Invitation & { participantId: string }) =>
  hub.pendingJoin({
    spaceId,
    invitationKey: invitation.key,
    participantId: invitation.participantId,
    pollToken: invitation.pollToken,
  });

async function start(): Promise<void> {
  if (!isSpaceId(spaceId)) {
    notify('join-notice', NO_SUCH_SPACE);
    return;
  }
  const existing = getSpaceCredentials(spaceId);
  if (!invitation) {
    if (existing) {
      location.replace(spacePath);
      return;
    }
    notify(
      'join-notice',
      'This link has no invitation key. Open the whole link you were sent (it ends with #key=…), or ask the owner for a new one.',
    );
    return;
  }
  try {
    const space = await hub.space(spaceId, invitation.key).get();
    showSpace(space);
    if (space.state === 'closed') {
      notify('join-notice', 'This space has closed.', 'warn');
      return;
    }
  } catch (error) {
    notify(
      'join-notice',
      refusal(error) ?? describeError(error, statusOf(error) === 404 ? 'the space' : 'this invitation'),
    );
    return;
  }
  if (existing?.role === 'owner') {
    // A join would put a participant key in the owner key's place, and the owner key is shown once.
    notify(
      'join-notice',
      'This tab holds the owner key of this space: joining here would replace it. Open the link in a private window or another browser to join as someone else. ',
      'warn',
    );
    $('join-notice').append(el('a', { href: spacePath }, 'Open the space as its owner'));
    return;
  }
  if (existing) {
    notify('join-notice', '', 'ok');
    $('join-section').prepend(
      el(
        'p',
        {},
        'You already joined this space in this tab. ',
        el('a', { href: spacePath }, 'Open it'),
        ' or join again under another name.',
      ),
    );
  }
  if (invitation.participantId) {
    await waitForApproval(
      pendingJoin({ ...invitation, participantId: invitation.participantId }),
      invitation.name,
    );
    return;
  }
  if (session) $('link-dashboard-row').hidden = false;
  $('join-section').hidden = false;
  const nameInput = $('join-name', HTMLInputElement);
  nameInput.value = session?.user.name ?? '';
  nameInput.focus();
}

const joinForm = $('join-form', HTMLFormElement);
joinForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  if (!invitation) return;
  const name = $('join-name', HTMLInputElement).value.trim();
  const role = $('join-role', HTMLInputElement).value.trim();
  notify('join-notice', '');
  await busy(submitButton(joinForm), async () => {
    try {
      const linked = session && $('link-dashboard', HTMLInputElement).checked;
      const userToken = linked ? await browserUserToken(session) : undefined;
      const joined = await hubAs(userToken).join(spaceId, invitation.key, {
        name,
        role,
        isHuman: true,
        wait: false,
      });
      if (!(joined instanceof PendingJoin)) {
        goToSpace({ key: joined.key, participantId: joined.participantId, role: 'participant', name });
        return;
      }
      Object.assign(invitation, {
        participantId: joined.participantId,
        pollToken: joined.pollToken,
        name,
        expiresAt: endsAt,
      });
      setInvitation(spaceId, invitation);
      void waitForApproval(joined, name);
    } catch (error) {
      notify('join-notice', refusal(error) ?? describeError(error, 'this invitation'));
    }
  });
});

void start();
