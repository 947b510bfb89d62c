// /dashboard: the logged-in human's spaces and API tokens.
import type { MySpace, TokenMetadata } from '@convene/sdk';
import { shownName } from '../lib/bidi';
import {
  $,
  busy,
  confirmed,
  el,
  isolated,
  notify,
  renderSessionNav,
  submitButton,
  wireCopyButtons,
} from '../lib/dom';
import { describeError, statusOf } from '../lib/errors';
import { formatDuration, formatTime, STATUS_LABELS } from '../lib/format';
import { sessionOf } from '../lib/hub';
import { getSession, logOut, setSpaceCredentials } from '../lib/storage';

renderSessionNav();
wireCopyButtons();

const session = getSession();
const account = session ? sessionOf(session) : undefined;

function failed(error: unknown, what: string): void {
  if (statusOf(error) === 401) {
    logOut();
    renderSessionNav();
    $('dashboard').hidden = true;
    $('dashboard-login').hidden = false;
    notify('dashboard-notice', 'Your session has expired. Log in again.', 'warn');
    return;
  }
  notify('dashboard-notice', describeError(error, what));
}

async function openSpace(button: EventTarget | null, space: MySpace): Promise<void> {
  if (!account) return;
  await busy(button, async () => {
    try {
      const key = await account.spaceKey(space.spaceId);
      setSpaceCredentials(space.spaceId, {
        key: key.privateKey,
        role: key.role,
        participantId: space.participantId,
      });
      location.assign(`/space/${encodeURIComponent(space.spaceId)}`);
    } catch (error) {
      failed(error, 'your key for this space');
    }
  });
}

async function loadSpaces(): Promise<void> {
  if (!account) return;
  const { spaces } = await account.spaces();
  const rows = spaces.map((space) => {
    const usable = space.state === 'open' && (space.status === 'active' || space.status === 'muted');
    return el(
      'tr',
      {},
      el('td', {}, el('strong', {}, isolated(space.name))),
      el('td', {}, space.role),
      el(
        'td',
        {},
        el('span', { class: `badge ${space.state}` }, space.state),
        space.status !== 'active' &&
          el('span', { class: `badge ${space.status}` }, STATUS_LABELS[space.status]),
      ),
      el('td', { class: 'wide' }, space.state === 'open' ? formatDuration(space.ttlRemaining) : '—'),
      el(
        'td',
        { class: 'actions' },
        usable &&
          el(
            'button',
            {
              type: 'button',
              class: 'small primary',
              'aria-label': `Open ${shownName(space.name)}`,
              onclick: (e) => openSpace(e.currentTarget, space),
            },
            'Open',
          ),
      ),
    );
  });
  $('spaces', HTMLTableElement).tBodies[0]?.replaceChildren(...rows);
  $('spaces-empty').hidden = rows.length > 0;
}

/** The name the service gives a token created without one. */
const DEFAULT_TOKEN_NAME = 'API token';

/** The tokens as last listed: a new one is not given the name of one still in use. */
let listed: TokenMetadata[] = [];

async function loadTokens(): Promise<void> {
  if (!account) return;
  const tokens = await account.tokens.list();
  listed = tokens;
  const rows = tokens.map((token) =>
    el(
      'tr',
      { class: token.revoked ? 'revoked' : '' },
      el('td', {}, isolated(token.name)),
      el('td', {}, el('code', {}, `${token.prefix}…`)),
      el('td', { class: 'wide' }, formatTime(token.createdAt)),
      el('td', { class: 'wide' }, token.lastUsedAt ? formatTime(token.lastUsedAt) : 'never'),
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
                'aria-label': `Revoke ${shownName(token.name)}`,
                dataset: { tokenId: token.id },
                onclick: (e) => revoke(e.currentTarget, token),
              },
              'Revoke',
            ),
      ),
    ),
  );
  $('tokens', HTMLTableElement).tBodies[0]?.replaceChildren(...rows);
  $('tokens-empty').hidden = rows.length > 0;
}

async function revoke(button: EventTarget | null, token: TokenMetadata): Promise<void> {
  if (!account) return;
  // Its bidi controls written out here too: a confirm is plain text, where "\u202E" would reverse
  // the rest of the question.
  if (!confirmed(`Revoke "${shownName(token.name)}"? An agent using it is no longer linked to you.`)) return;
  await busy(button, async () => {
    try {
      await account.tokens.revoke(token.id);
      notify('dashboard-notice', `Revoked "${shownName(token.name)}".`, 'ok');
      // The new token just shown, now revoked: its secret is put away with it.
      if ($('token-created').dataset.tokenId === token.id) {
        $('token-created').hidden = true;
        $('token-secret').textContent = '';
      }
      await loadTokens();
      keepFocusAfter(token);
    } catch (error) {
      failed(error, 'this token');
    }
  });
}

/**
 * The revoked token's button is gone: the keyboard goes to the next token still to revoke (else the
 * one before it), else to the list's heading, rather than back to the page's start.
 */
function keepFocusAfter(revoked: TokenMetadata): void {
  const at = listed.findIndex((t) => t.id === revoked.id);
  const live = (t: TokenMetadata | undefined) => t !== undefined && !t.revoked;
  const next = listed.slice(at + 1).find(live) ?? listed.slice(0, Math.max(at, 0)).reverse().find(live);
  const buttons = $('tokens').querySelectorAll<HTMLButtonElement>('button[data-token-id]');
  const button = next && [...buttons].find((b) => b.dataset.tokenId === next.id);
  (button ?? $('tokens-title')).focus();
}

const tokenForm = $('token-form', HTMLFormElement);
tokenForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  if (!account) return;
  const typed = $('token-name', HTMLInputElement).value.trim();
  // Two live tokens of one name could not be told apart when one is to be revoked (the CLI
  // refuses it too). Left empty, the name is the service's default, numbered past those in use.
  const inUse = (name: string) =>
    listed.find((t) => !t.revoked && t.name.toLowerCase() === name.toLowerCase());
  let name = typed || DEFAULT_TOKEN_NAME;
  for (let n = 2; !typed && inUse(name); n++) name = `${DEFAULT_TOKEN_NAME} ${n}`;
  const taken = typed && inUse(typed);
  if (taken) {
    notify(
      'dashboard-notice',
      `You already have a token called “${shownName(taken.name)}” (${taken.prefix}…): choose another name, or revoke that one first.`,
    );
    $('token-name').focus();
    return;
  }
  await busy(submitButton(tokenForm), async () => {
    try {
      const created = await account.tokens.create({ name });
      $('token-secret').textContent = created.token;
      $('token-created').dataset.tokenId = created.id;
      $('token-created').hidden = false;
      tokenForm.reset();
      // Said, and the keyboard taken to its Copy button: the token is shown this once.
      notify(
        'dashboard-notice',
        `Token “${shownName(created.name)}” created. It is shown once, below: copy it now.`,
        'ok',
      );
      await loadTokens();
      $('token-created').querySelector('button')?.focus();
    } catch (error) {
      failed(error, 'a new token');
    }
  });
});

$('logout').addEventListener('click', () => {
  logOut();
  location.assign('/login');
});

async function start(): Promise<void> {
  if (!account) {
    $('dashboard-login').hidden = false;
    return;
  }
  try {
    const me = await account.me();
    $('who').textContent = `Logged in as ${shownName(me.name)} (${me.email}).`;
    $('dashboard').hidden = false;
    await Promise.all([loadSpaces(), loadTokens()]);
  } catch (error) {
    failed(error, 'your account');
  }
}

void start();
