// /join/{spaceId}#key=…: the invitation key travels in the fragment, so it never reaches the
// server's logs. The page shows the space, joins, waits for approval in a private space, then
// opens the space page with the participant key kept in this tab's sessionStorage.
import {
  api,
  browserUserToken,
  describeError,
  forgetInvitation,
  getInvitation,
  getSession,
  getSpaceCredentials,
  setInvitation,
  setSpaceCredentials,
} from '/web/api.js';
import { $, avatar, busy, el, formatDuration, notify, renderSessionNav } from '/web/ui.js';

renderSessionNav();

const spaceId = $('page').dataset.spaceId;
const spacePath = `/space/${encodeURIComponent(spaceId)}`;
const session = getSession();
let pollInterval = 2000;

function keyFromFragment() {
  const params = new URLSearchParams(location.hash.slice(1));
  return params.get('key')?.trim() || undefined;
}

const fragmentKey = keyFromFragment();
if (fragmentKey) {
  const kept = getInvitation(spaceId);
  if (kept?.key !== fragmentKey) setInvitation(spaceId, { key: fragmentKey });
  // Out of the address bar (and of screenshots and shared screens); the tab keeps it.
  history.replaceState(null, '', location.pathname);
}
const invitation = getInvitation(spaceId);

function goToSpace(credentials) {
  setSpaceCredentials(spaceId, credentials);
  forgetInvitation(spaceId);
  location.assign(spacePath);
}

function showSpace(space) {
  $('space-title').textContent = space.name;
  document.title = `Join ${space.name} · Convene`;
  $('space-description').textContent = space.description;
  if (space.agenda) {
    $('space-agenda').textContent = space.agenda;
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
              p.name,
              p.isOwner ? ' (owner)' : '',
              p.role && p.role !== 'owner' ? ` · ${p.role}` : '',
            ),
          ),
        )
      : [el('li', { class: 'empty' }, 'Nobody yet')]),
  );
  pollInterval = space.suggestedPollingIntervalMs || pollInterval;
  $('space-info').hidden = false;
}

/** The join's statusUrl, as a path of this site (PUBLIC_URL may name the host differently). */
function statusPath(participantId) {
  try {
    const url = new URL(invitation.statusUrl);
    if (url.pathname.startsWith('/hub/space/')) return url.pathname;
  } catch {}
  return `/hub/space/${encodeURIComponent(spaceId)}/join/${encodeURIComponent(participantId)}`;
}

async function waitForApproval(participantId, name) {
  $('join-section').hidden = true;
  $('waiting').hidden = false;
  for (;;) {
    try {
      const { status, body } = await api('GET', statusPath(participantId), {
        key: invitation.key,
        pollToken: invitation.pollToken,
      });
      if (status === 200 && body.participantPrivateKey) {
        notify('join-notice', 'Approved. Opening the space…', 'ok');
        goToSpace({ key: body.participantPrivateKey, participantId, role: 'participant', name });
        return;
      }
      notify('join-notice', '');
    } catch (error) {
      // A refusal (kicked while waiting) or a closed space ends the wait; a hiccup does not.
      if (error.status === 401 || error.status === 404 || error.status === 409) {
        $('waiting').hidden = true;
        forgetInvitation(spaceId);
        notify('join-notice', `You were not let in. ${describeError(error, 'this invitation')}`);
        return;
      }
      notify('join-notice', `${describeError(error)} Still trying…`, 'warn');
    }
    await new Promise((resolve) => setTimeout(resolve, pollInterval));
  }
}

async function start() {
  const existing = getSpaceCredentials(spaceId);
  if (!invitation?.key) {
    if (existing?.key) {
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
    const { body: space } = await api('GET', `/hub/space/${encodeURIComponent(spaceId)}`, {
      key: invitation.key,
    });
    showSpace(space);
    if (space.state === 'closed') {
      notify('join-notice', 'This space has closed.', 'warn');
      return;
    }
  } catch (error) {
    notify('join-notice', describeError(error, error.status === 404 ? 'the space' : 'this invitation'));
    return;
  }
  if (existing?.key) {
    notify('join-notice', '', 'ok');
    const note = el(
      'p',
      {},
      'You already joined this space in this tab. ',
      el('a', { href: spacePath }, 'Open it'),
      ' or join again under another name.',
    );
    $('join-section').prepend(note);
  }
  if (invitation.participantId) {
    await waitForApproval(invitation.participantId, invitation.name);
    return;
  }
  if (session) $('link-dashboard-row').hidden = false;
  $('join-section').hidden = false;
  $('join-name').value = session?.user?.name ?? '';
  $('join-name').focus();
}

$('join-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const name = $('join-name').value.trim();
  const role = $('join-role').value.trim();
  notify('join-notice', '');
  await busy(form.querySelector('button[type=submit]'), async () => {
    try {
      const userToken = session && $('link-dashboard').checked ? await browserUserToken(session) : undefined;
      const { status, body } = await api('POST', `/hub/space/${encodeURIComponent(spaceId)}/join`, {
        key: invitation.key,
        body: { name, role, isHuman: true },
        userToken,
      });
      if (status === 200) {
        goToSpace({
          key: body.participantPrivateKey,
          participantId: body.participantId,
          role: 'participant',
          name,
        });
        return;
      }
      Object.assign(invitation, {
        participantId: body.participantId,
        statusUrl: body.statusUrl,
        pollToken: body.pollToken,
        name,
      });
      setInvitation(spaceId, invitation);
      void waitForApproval(body.participantId, name);
    } catch (error) {
      notify('join-notice', describeError(error, 'this invitation'));
    }
  });
});

void start();
