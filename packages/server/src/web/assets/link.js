// /link?code=XXXX-XXXX: a logged-in human sees which agent asks to be linked, and approves or
// refuses. The code is not a secret (the agent polls with its own device code).
import { api, describeError, getSession, logOut } from '/web/api.js';
import { $, busy, formatTime, notify, renderSessionNav } from '/web/ui.js';

renderSessionNav();

const STATUS_TEXT = {
  pending: 'Waiting for your answer',
  approved: 'Approved: the agent receives its token at its next poll.',
  denied: 'Refused.',
  consumed: 'Already approved and collected by the agent.',
  expired: 'This request has expired. Ask the agent to start again.',
};

const session = getSession();
const params = new URLSearchParams(location.search);
const codeInput = $('link-code');
codeInput.value = params.get('code') ?? '';
let userCode = '';

const normalise = (code) => code.trim().toUpperCase();

if (!session) {
  const back = `/link${codeInput.value ? `?code=${encodeURIComponent(codeInput.value)}` : ''}`;
  $('link-login-button').href = `/login?next=${encodeURIComponent(back)}`;
  $('link-login').hidden = false;
  $('link-form').hidden = true;
  notify('link-notice', 'Log in first: the agent is linked to the account you are logged in with.', 'warn');
}

function failed(error) {
  if (error.status === 401) {
    logOut();
    notify('link-notice', 'Your session has expired. Log in again to continue.');
    $('link-login').hidden = false;
    return;
  }
  notify(
    'link-notice',
    error.status === 404
      ? 'No pending request has this code. Check the code, or ask the agent to start again (codes last 10 minutes).'
      : describeError(error, 'this link request'),
  );
}

async function lookUp() {
  userCode = normalise(codeInput.value);
  if (!userCode) return;
  notify('link-notice', '');
  $('link-request').hidden = true;
  try {
    const { body } = await api('GET', `/hub/me/link/${encodeURIComponent(userCode)}`, {
      bearer: session.token,
    });
    $('link-agent').textContent = body.agentName ?? 'an unnamed agent';
    $('link-status').textContent =
      body.status === 'pending'
        ? `${STATUS_TEXT.pending} (until ${formatTime(body.expiresAt)}).`
        : (STATUS_TEXT[body.status] ?? body.status);
    $('link-actions').hidden = body.status !== 'pending';
    $('link-request').hidden = false;
  } catch (error) {
    failed(error);
  }
}

async function decide(button, decision) {
  await busy(button, async () => {
    try {
      await api('POST', `/hub/me/link/${decision}`, { bearer: session.token, body: { userCode } });
      $('link-actions').hidden = true;
      $('link-status').textContent = decision === 'approve' ? STATUS_TEXT.approved : STATUS_TEXT.denied;
      notify(
        'link-notice',
        decision === 'approve' ? 'Approved. You can close this page.' : 'Refused. The agent gets no token.',
        'ok',
      );
    } catch (error) {
      failed(error);
    }
  });
}

$('link-form').addEventListener('submit', (event) => {
  event.preventDefault();
  void busy(event.currentTarget.querySelector('button'), lookUp);
});
$('link-approve').addEventListener('click', (event) => decide(event.currentTarget, 'approve'));
$('link-deny').addEventListener('click', (event) => decide(event.currentTarget, 'deny'));

if (session && codeInput.value) void lookUp();
