// /dashboard: the logged-in human's spaces and API tokens.
import { api, describeError, getSession, logOut, setSpaceCredentials } from '/web/api.js';
import {
  $,
  busy,
  el,
  formatDuration,
  formatTime,
  notify,
  renderSessionNav,
  wireCopyButtons,
} from '/web/ui.js';

renderSessionNav();
wireCopyButtons();

const session = getSession();
const as = { bearer: session?.token };

function failed(error, what) {
  if (error.status === 401) {
    logOut();
    $('dashboard').hidden = true;
    $('dashboard-login').hidden = false;
    notify('dashboard-notice', 'Your session has expired. Log in again.', 'warn');
    return;
  }
  notify('dashboard-notice', describeError(error, what));
}

async function openSpace(button, space) {
  await busy(button, async () => {
    try {
      const { body } = await api('GET', `/hub/space/${encodeURIComponent(space.spaceId)}/key`, as);
      setSpaceCredentials(space.spaceId, {
        key: body.privateKey,
        role: body.role,
        participantId: space.participantId,
      });
      location.assign(`/space/${encodeURIComponent(space.spaceId)}`);
    } catch (error) {
      failed(error, 'your key for this space');
    }
  });
}

async function loadSpaces() {
  const { body } = await api('GET', '/hub/me/spaces', as);
  const rows = body.spaces.map((space) => {
    const usable = space.state === 'open' && (space.status === 'active' || space.status === 'muted');
    return el(
      'tr',
      {},
      el('td', {}, el('strong', {}, space.name)),
      el('td', {}, space.role),
      el(
        'td',
        {},
        el('span', { class: `badge ${space.state}` }, space.state),
        space.status && space.status !== 'active'
          ? el('span', { class: `badge ${space.status}` }, space.status)
          : '',
      ),
      el('td', {}, space.state === 'open' ? formatDuration(space.ttlRemaining) : '—'),
      el(
        'td',
        { class: 'actions' },
        usable
          ? el(
              'button',
              { type: 'button', class: 'small primary', onclick: (e) => openSpace(e.currentTarget, space) },
              'Open',
            )
          : '',
      ),
    );
  });
  $('spaces').tBodies[0].replaceChildren(...rows);
  $('spaces-empty').hidden = rows.length > 0;
}

async function loadTokens() {
  const { body } = await api('GET', '/hub/me/tokens', as);
  const rows = body.map((token) =>
    el(
      'tr',
      { class: token.revoked ? 'revoked' : '' },
      el('td', {}, token.name),
      el('td', {}, el('code', {}, `${token.prefix}…`)),
      el('td', {}, formatTime(token.createdAt)),
      el('td', {}, token.lastUsedAt ? formatTime(token.lastUsedAt) : 'never'),
      el(
        'td',
        { class: 'actions' },
        token.revoked
          ? 'revoked'
          : el(
              'button',
              {
                type: 'button',
                class: 'small danger',
                'aria-label': `Revoke ${token.name}`,
                onclick: (e) => revoke(e.currentTarget, token),
              },
              'Revoke',
            ),
      ),
    ),
  );
  $('tokens').tBodies[0].replaceChildren(...rows);
  $('tokens-empty').hidden = rows.length > 0;
}

async function revoke(button, token) {
  if (!confirm(`Revoke "${token.name}"? An agent using it is no longer linked to you.`)) return;
  await busy(button, async () => {
    try {
      await api('DELETE', `/hub/me/tokens/${encodeURIComponent(token.id)}`, as);
      notify('dashboard-notice', `Revoked "${token.name}".`, 'ok');
      await loadTokens();
    } catch (error) {
      failed(error, 'this token');
    }
  });
}

$('token-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const name = $('token-name').value.trim();
  await busy(form.querySelector('button'), async () => {
    try {
      const { body } = await api('POST', '/hub/me/tokens', { ...as, body: name ? { name } : {} });
      $('token-secret').textContent = body.token;
      $('token-created').hidden = false;
      form.reset();
      notify('dashboard-notice', '');
      await loadTokens();
    } catch (error) {
      failed(error, 'a new token');
    }
  });
});

$('logout').addEventListener('click', () => {
  logOut();
  location.assign('/login');
});

async function start() {
  if (!session) {
    $('dashboard-login').hidden = false;
    return;
  }
  try {
    const { body: me } = await api('GET', '/hub/me', as);
    $('who').textContent = `Logged in as ${me.name} (${me.email}).`;
    $('dashboard').hidden = false;
    await Promise.all([loadSpaces(), loadTokens()]);
  } catch (error) {
    failed(error, 'your account');
  }
}

void start();
