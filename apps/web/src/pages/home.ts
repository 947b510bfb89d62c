// The home page: create a space, then show the owner key once and the invitation links.
import type { CreateSpaceRequest } from '@convene/sdk';
import { $, busy, formText, notify, renderSessionNav, submitButton, wireCopyButtons } from '../lib/dom';
import { describeError } from '../lib/errors';
import { browserUserToken, hub, hubAs } from '../lib/hub';
import { getSession, setSpaceCredentials } from '../lib/storage';

renderSessionNav();
wireCopyButtons();

const session = getSession();
if (session) $('link-dashboard-row').hidden = false;

$('create-space', HTMLFormElement).addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = $('create-space', HTMLFormElement);
  const text = formText(form);
  const request: CreateSpaceRequest = {
    name: text('name'),
    description: text('description'),
    privacy: text('privacy') === 'private' ? 'private' : 'public',
    ttl: Number(text('ttl')) || 86400,
    isHuman: true,
  };
  if (text('agenda')) request.agenda = text('agenda');
  if (text('ownerName')) request.ownerName = text('ownerName');
  if (text('ownerRole')) request.ownerRole = text('ownerRole');
  notify('create-notice', '');

  await busy(submitButton(form), async () => {
    try {
      const linked = session && $('link-dashboard', HTMLInputElement).checked;
      const userToken = linked ? await browserUserToken(session) : undefined;
      const created = await hubAs(userToken).spaces.create(request);
      setSpaceCredentials(created.spaceId, {
        key: created.ownerPrivateKey,
        participantId: created.ownerId,
        role: 'owner',
        name: request.ownerName ?? 'Owner',
      });
      const invitation = await hub.space(created.spaceId, created.ownerPrivateKey).invitations.create();
      $('owner-key').textContent = created.ownerPrivateKey;
      $('human-link').textContent = invitation.humanLink;
      $('agent-link').textContent = invitation.agentLink;
      $('open-space', HTMLAnchorElement).href = `/space/${encodeURIComponent(created.spaceId)}`;
      form.reset();
      $('created').hidden = false;
      const title = $('created-title');
      title.scrollIntoView({ behavior: 'smooth', block: 'start' });
      title.setAttribute('tabindex', '-1');
      title.focus({ preventScroll: true });
    } catch (error) {
      // A refused dashboard session is said as that (SessionExpiredError), by describeError too.
      notify('create-notice', describeError(error, 'the new space'));
    }
  });
});
