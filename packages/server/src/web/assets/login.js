// /login: log in or sign up; the dashboard JWT is kept in this tab's sessionStorage only.
import { api, describeError, getSession, logOut, setSession } from '/web/api.js';
import { $, busy, el, notify, renderSessionNav } from '/web/ui.js';

renderSessionNav();

/** Where to go afterwards: `?next=` when it is a path of this site, else the dashboard. */
function nextPage() {
  const next = new URLSearchParams(location.search).get('next') ?? '';
  return next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/dashboard';
}

const current = getSession();
if (current) {
  notify('login-notice', `You are logged in as ${current.user.email}.`, 'ok');
  $('login-notice').append(
    ' ',
    el('a', { href: nextPage() }, 'Continue'),
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

function wire(formId, path, describe) {
  $(formId).addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = Object.fromEntries(
      [...new FormData(form)]
        .map(([name, value]) => [name, String(value).trim()])
        .filter(([, v]) => v !== ''),
    );
    notify('login-notice', '');
    await busy(form.querySelector('button[type=submit]'), async () => {
      try {
        const { body } = await api('POST', path, { body: data });
        logOut(); // a new human: forget the previous one's browser token
        setSession({ token: body.token, user: body.user, expiresAt: body.expiresAt });
        location.assign(nextPage());
      } catch (error) {
        notify('login-notice', describe(error));
      }
    });
  });
}

wire('login-form', '/hub/auth/login', (error) =>
  error.status === 401
    ? 'That email and password do not match an account.'
    : describeError(error, 'this account'),
);
wire('signup-form', '/hub/auth/signup', (error) =>
  error.status === 409
    ? 'An account with this email already exists: log in instead.'
    : describeError(error, 'this account'),
);
