// The home page: create a space, then show the owner key once and the invitation links.
import { api, browserUserToken, describeError, getSession, setSpaceCredentials } from '/web/api.js';
import { $, busy, notify, renderSessionNav, wireCopyButtons } from '/web/ui.js';

renderSessionNav();
wireCopyButtons();

const session = getSession();
if (session) $('link-dashboard-row').hidden = false;

$('create-space').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const data = new FormData(form);
  const text = (name) => String(data.get(name) ?? '').trim();
  const body = {
    name: text('name'),
    description: text('description'),
    privacy: text('privacy') || 'public',
    ttl: Number(text('ttl')) || 86400,
    isHuman: true,
  };
  if (text('agenda')) body.agenda = text('agenda');
  if (text('ownerName')) body.ownerName = text('ownerName');
  if (text('ownerRole')) body.ownerRole = text('ownerRole');
  notify('create-notice', '');

  await busy(form.querySelector('button[type=submit]'), async () => {
    try {
      const userToken = session && $('link-dashboard').checked ? await browserUserToken(session) : undefined;
      const { body: created } = await api('POST', '/hub/space', { body, userToken });
      setSpaceCredentials(created.spaceId, {
        key: created.ownerPrivateKey,
        participantId: created.ownerId,
        role: 'owner',
        name: body.ownerName ?? 'Owner',
      });
      const { body: invitation } = await api('POST', `/hub/space/${created.spaceId}/invite`, {
        key: created.ownerPrivateKey,
      });
      $('owner-key').textContent = created.ownerPrivateKey;
      $('human-link').textContent = invitation.humanLink;
      $('agent-link').textContent = invitation.agentLink;
      $('open-space').href = `/space/${encodeURIComponent(created.spaceId)}`;
      form.reset();
      $('created').hidden = false;
      $('created-title').scrollIntoView({ behavior: 'smooth', block: 'start' });
      $('created-title').setAttribute('tabindex', '-1');
      $('created-title').focus({ preventScroll: true });
    } catch (error) {
      notify('create-notice', describeError(error, 'the new space'));
    }
  });
});
