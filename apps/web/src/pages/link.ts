// /link?code=XXXX-XXXX: a logged-in human sees which agent asks to be linked, and approves or
// refuses. The code is not a secret (the agent polls with its own device code).
import type { LinkRequest } from '@convene/sdk';
import { $, busy, isolated, notify, renderSessionNav } from '../lib/dom';
import { describeError, statusOf } from '../lib/errors';
import { formatTime } from '../lib/format';
import { sessionOf } from '../lib/hub';
import { getSession, logOut } from '../lib/storage';

renderSessionNav();

const STATUS_TEXT: Record<LinkRequest['status'], string> = {
  pending: 'Waiting for your answer',
  approved: 'Approved: the agent receives its token at its next poll.',
  denied: 'Refused.',
  consumed: 'Already approved and collected by the agent.',
  expired: 'This request has expired. Ask the agent to start again.',
};

const session = getSession();
const codeInput = $('link-code', HTMLInputElement);
codeInput.value = new URLSearchParams(location.search).get('code') ?? '';
let userCode = '';

if (!session) {
  const back = `/link${codeInput.value ? `?code=${encodeURIComponent(codeInput.value)}` : ''}`;
  $('link-login-button', HTMLAnchorElement).href = `/login?next=${encodeURIComponent(back)}`;
  $('link-login').hidden = false;
  $('link-form').hidden = true;
  notify('link-notice', 'Log in first: the agent is linked to the account you are logged in with.', 'warn');
}

function failed(error: unknown): void {
  if (statusOf(error) === 401) {
    logOut();
    renderSessionNav();
    notify('link-notice', 'Your session has expired. Log in again to continue.');
    $('link-login').hidden = false;
    return;
  }
  notify(
    'link-notice',
    statusOf(error) === 404
      ? 'No pending request has this code. Check the code, or ask the agent to start again (codes last 10 minutes).'
      : describeError(error, 'this link request'),
  );
}

async function lookUp(): Promise<void> {
  userCode = codeInput.value.trim().toUpperCase();
  if (!userCode || !session) return;
  notify('link-notice', '');
  $('link-request').hidden = true;
  try {
    const request = await sessionOf(session).link.get(userCode);
    // The name is the agent's own choice, and the human decides on it: no control may disguise it.
    $('link-agent').replaceChildren(request.agentName ? isolated(request.agentName) : 'an unnamed agent');
    $('link-status').textContent =
      request.status === 'pending'
        ? `${STATUS_TEXT.pending} (until ${formatTime(request.expiresAt)}).`
        : (STATUS_TEXT[request.status] ?? request.status);
    $('link-actions').hidden = request.status !== 'pending';
    $('link-request').hidden = false;
  } catch (error) {
    failed(error);
  }
}

async function decide(button: EventTarget | null, decision: 'approve' | 'deny'): Promise<void> {
  if (!session) return;
  await busy(button, async () => {
    try {
      await sessionOf(session).link[decision](userCode);
      $('link-actions').hidden = true;
      $('link-status').textContent = decision === 'approve' ? STATUS_TEXT.approved : STATUS_TEXT.denied;
      notify(
        'link-notice',
        decision === 'approve' ? 'Approved. You can close this page.' : 'Refused. The agent gets no token.',
        'ok',
      );
    } catch (error) {
      // Decided meanwhile (in another tab) or lapsed: where it stands now, without the buttons.
      if (statusOf(error) === 404) await lookUp();
      else failed(error);
    }
  });
}

$('link-form', HTMLFormElement).addEventListener('submit', (event) => {
  event.preventDefault();
  void busy($('link-form').querySelector('button'), lookUp);
});
$('link-approve').addEventListener('click', (event) => decide(event.currentTarget, 'approve'));
$('link-deny').addEventListener('click', (event) => decide(event.currentTarget, 'deny'));

if (session && codeInput.value) void lookUp();
