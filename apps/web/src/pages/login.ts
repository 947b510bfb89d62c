// /login: log in or sign up; the dashboard JWT is kept in this tab's sessionStorage only.
import type { Session } from '@convene/sdk';
import { $, busy, el, formText, notify, renderSessionNav, submitButton } from '../lib/dom';
import { describeError, statusOf } from '../lib/errors';
import { nextPath } from '../lib/format';
import { hub } from '../lib/hub';
import { getSession, logOut, setSession } from '../lib/storage';

renderSessionNav();

const next = nextPath(location.search);

const current = getSession();
if (current) {
  notify('login-notice', `You are logged in as ${current.user.email}.`, 'ok');
  $('login-notice').append(
    ' ',
    el('a', { href: next }, 'Continue'),
    ' · ',
    el(
      'button',
      {
        type: 'button',
        class: 'small',
        onclick: () => {
          logOut();
          location.reload();
        },
      },
      'Log out',
    ),
  );
}

function wire(
  formId: string,
  start: (text: (name: string) => string) => Promise<Session>,
  describe: (error: unknown) => string,
) {
  const form = $(formId, HTMLFormElement);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const text = formText(form);
    notify('login-notice', '');
    await busy(submitButton(form), async () => {
      try {
        const session = await start(text);
        logOut(); // a new human: forget the previous one's browser token
        if (!session.user) throw new Error('the server answered no user');
        setSession({ token: session.token, user: session.user, expiresAt: session.expiresAt });
        location.assign(next);
      } catch (error) {
        notify('login-notice', describe(error));
      }
    });
  });
}

wire(
  'login-form',
  (text) => hub.auth.login({ email: text('email'), password: text('password') }),
  (error) =>
    statusOf(error) === 401
      ? 'That email and password do not match an account.'
      : describeError(error, 'this account'),
);
wire(
  'signup-form',
  (text) =>
    hub.auth.signup({
      email: text('email'),
      password: text('password'),
      ...(text('name') ? { name: text('name') } : {}),
    }),
  (error) =>
    statusOf(error) === 409
      ? 'An account with this email already exists: log in instead.'
      : describeError(error, 'this account'),
);
