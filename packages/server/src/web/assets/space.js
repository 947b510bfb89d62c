// /space/{spaceId}: messages live over Server-Sent Events, participants and moderation,
// documents with lock, edit, save and history. The space key comes from this tab's
// sessionStorage (put there by the join page, the home page or the dashboard), never the URL.
import {
  api,
  describeError,
  forgetSpaceCredentials,
  getSession,
  getSpaceCredentials,
  setSpaceCredentials,
} from '/web/api.js';
import {
  $,
  avatar,
  busy,
  el,
  formatDuration,
  formatTime,
  messageBody,
  notify,
  renderSessionNav,
  STATUS_LABELS,
  wireCopyButtons,
} from '/web/ui.js';

renderSessionNav();
wireCopyButtons();

const spaceId = $('page').dataset.spaceId;
const base = `/hub/space/${encodeURIComponent(spaceId)}`;

const state = {
  /** `{ key, participantId?, role?, name? }` */
  me: undefined,
  space: undefined,
  participants: new Map(),
  artifacts: new Map(),
  seen: new Set(),
  lastTimestamp: undefined,
  stream: undefined,
  ended: false,
  /** Message ids this tab sent, to learn who "I" am when the key was pasted. */
  sentIds: new Set(),
  /** The document on screen: `{ artifact, editing, baseVersion, saved, heartbeat }` */
  doc: undefined,
};

const isOwner = () => state.me?.role === 'owner';
const participantName = (id) => state.participants.get(id)?.name ?? 'someone';
const call = (method, path, options = {}) => api(method, `${base}${path}`, { key: state.me.key, ...options });

/** Avatars are ours: use the path, so they load whatever host name the page was opened with. */
function avatarOf(participant) {
  try {
    const url = new URL(participant.avatarUrl, location.href);
    if (url.pathname.startsWith('/avatar/')) return { ...participant, avatarUrl: url.pathname };
  } catch {}
  return participant;
}

// --- Space and participants --------------------------------------------------------------------

function renderSpace() {
  const { space } = state;
  $('space-title').textContent = space.name;
  document.title = `${space.name} · Convene`;
  $('space-description').textContent = space.description;
  if (space.agenda) {
    $('space-agenda').textContent = space.agenda;
    $('agenda-block').hidden = false;
  }
  const badge = $('space-state');
  const closed = state.ended || space.state === 'closed';
  badge.textContent = closed ? 'closed' : 'open';
  badge.className = `badge ${closed ? 'closed' : 'open'}`;
  $('space-privacy').textContent = space.privacy === 'private' ? '· private' : '· public';
  $('space-ttl').textContent = closed ? '' : `· ${formatDuration(space.ttlRemaining)}`;
  $('invite-button').hidden = !isOwner() || closed;
  $('close-space-button').hidden = !isOwner() || closed;
  $('leave-button').hidden = isOwner() || closed || !state.me.participantId;
  const me = state.participants.get(state.me.participantId);
  const who = me ?? { name: state.me.name };
  $('you').replaceChildren(
    who.name ? el('strong', {}, who.name) : 'You',
    isOwner() ? ' · owner of this space' : state.me.role === 'participant' ? ' · participant' : '',
    me ? ' ' : '',
    me ? el('span', { class: `badge ${me.status}` }, STATUS_LABELS[me.status] ?? me.status) : '',
  );
}

function moderationButtons(p) {
  if (!isOwner() || p.isOwner || state.ended) return undefined;
  const actions = [];
  if (p.status === 'waitingForApproval') actions.push(['approve', 'Approve', 'primary']);
  if (p.status === 'active') actions.push(['mute', 'Mute', '']);
  if (p.status === 'muted') actions.push(['unmute', 'Unmute', '']);
  if (p.status === 'waitingForApproval' || p.status === 'active' || p.status === 'muted')
    actions.push(['kick', p.status === 'waitingForApproval' ? 'Refuse' : 'Remove', 'danger']);
  if (!actions.length) return undefined;
  return el(
    'div',
    { class: 'moderation' },
    actions.map(([action, label, kind]) =>
      el(
        'button',
        {
          type: 'button',
          class: `small ${kind}`,
          'aria-label': `${label} ${p.name}`,
          onclick: (event) => moderate(event.currentTarget, p, action),
        },
        label,
      ),
    ),
  );
}

async function moderate(button, participant, action) {
  if (action === 'kick' && !confirm(`Remove ${participant.name} from the space? Their key stops working.`))
    return;
  await busy(button, async () => {
    try {
      await call('POST', `/participants/${encodeURIComponent(participant.participantId)}/${action}`);
      notify('space-notice', '');
    } catch (error) {
      notify('space-notice', describeError(error, 'this participant'));
    }
  });
}

const STATUS_ORDER = { waitingForApproval: 0, active: 1, muted: 2, left: 3, kicked: 4 };

function renderParticipants() {
  const people = [...state.participants.values()].sort(
    (a, b) =>
      Number(b.isOwner) - Number(a.isOwner) ||
      (STATUS_ORDER[a.status] ?? 9) - (STATUS_ORDER[b.status] ?? 9) ||
      a.name.localeCompare(b.name),
  );
  $('participants').replaceChildren(
    ...people.map((p) => {
      const gone = p.status === 'left' || p.status === 'kicked';
      return el(
        'li',
        { class: gone ? 'gone' : '', dataset: { participantId: p.participantId } },
        avatar(avatarOf(p)),
        el(
          'div',
          {},
          el(
            'div',
            { class: 'person-name' },
            p.name,
            p.participantId === state.me.participantId ? ' (you)' : '',
          ),
          // The owner's role defaults to "owner", which its badge already says.
          p.role && !(p.isOwner && p.role === 'owner') ? el('div', { class: 'person-role' }, p.role) : '',
          el(
            'div',
            { class: 'person-badges' },
            p.isOwner ? el('span', { class: 'badge owner' }, 'owner') : '',
            el('span', { class: `badge ${p.status}` }, STATUS_LABELS[p.status] ?? p.status),
            el('span', { class: 'badge' }, p.isHuman ? 'human' : 'agent'),
          ),
          moderationButtons(p),
        ),
      );
    }),
  );
  renderSpace();
}

// --- Messages ----------------------------------------------------------------------------------

function appendMessage(message) {
  if (state.seen.has(message.id)) return;
  state.seen.add(message.id);
  state.lastTimestamp = message.timestamp;
  if (state.sentIds.has(message.id) && !state.me.participantId) learnWhoIAm(message);
  const list = $('messages');
  list.querySelector('.empty')?.remove();
  const sender = state.participants.get(message.senderId) ?? {
    participantId: message.senderId,
    name: message.senderName,
    avatarUrl: `/avatar/${message.senderId}.svg`,
  };
  const nearBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 80;
  list.append(
    el(
      'li',
      {
        class: `message${message.senderId === state.me.participantId ? ' mine' : ''}`,
        dataset: { messageId: message.id, type: message.type },
      },
      avatar(avatarOf(sender)),
      el(
        'div',
        { class: 'bubble' },
        el(
          'div',
          { class: 'message-head' },
          el('strong', {}, message.senderName),
          message.isOwner ? el('span', { class: 'badge owner' }, 'owner') : '',
          el(
            'time',
            { datetime: message.timestamp, title: message.timestamp },
            formatTime(message.timestamp),
          ),
        ),
        messageBody(message),
      ),
    ),
  );
  if (nearBottom || message.senderId === state.me.participantId) list.scrollTop = list.scrollHeight;
}

/** A pasted key says nothing of whose it is: the first message sent with it does. */
function learnWhoIAm(message) {
  state.me = {
    ...state.me,
    participantId: message.senderId,
    role: message.isOwner ? 'owner' : 'participant',
    name: message.senderName,
  };
  setSpaceCredentials(spaceId, state.me);
  renderParticipants();
  renderArtifacts();
}

$('message-content').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    $('send-form').requestSubmit();
  }
});

$('message-type').addEventListener('change', () => {
  const type = $('message-type').value;
  $('message-content').placeholder =
    type === 'image'
      ? 'An https:// image URL, or a data:image/…;base64 URI'
      : type === 'html'
        ? 'HTML, e.g. <b>bold</b> (sanitised before display)'
        : 'Write a message (Enter sends, Shift+Enter for a new line)';
});

$('send-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = $('message-content');
  const content = input.value;
  const type = $('message-type').value;
  if (!content.trim()) return;
  notify('send-notice', '');
  await busy(event.currentTarget.querySelector('button[type=submit]'), async () => {
    try {
      const { body } = await call('POST', '/messages', { body: { content, type } });
      state.sentIds.add(body.messageId);
      input.value = '';
      input.focus();
    } catch (error) {
      const text =
        error.status === 403
          ? 'The owner has muted you: you can read, but not send, until they unmute you.'
          : describeError(error);
      notify('send-notice', text);
    }
  });
});

// --- The stream --------------------------------------------------------------------------------

function setLive(text, on) {
  $('live').textContent = text;
  $('live').classList.toggle('on', on);
}

function endSpace(text, kind = 'warn') {
  state.ended = true;
  state.stream?.close();
  setLive('ended', false);
  for (const control of $('send-form').elements) control.disabled = true;
  $('artifact-form').querySelector('button').disabled = true;
  stopEditing();
  notify('space-notice', text, kind);
  renderParticipants();
  renderArtifacts();
  if (state.doc) renderDocument();
}

function connectStream() {
  const query = new URLSearchParams({ key: state.me.key });
  if (state.lastTimestamp) query.set('timestamp', state.lastTimestamp);
  // EventSource cannot set headers: the key goes in `key=`, which the server's logs redact.
  const stream = new EventSource(`${base}/messages/stream?${query}`);
  state.stream = stream;
  const on = (name, handler) =>
    stream.addEventListener(name, (event) => {
      try {
        handler(JSON.parse(event.data));
      } catch (error) {
        console.error(`bad ${name} event`, error);
      }
    });
  stream.addEventListener('open', () => setLive('live', true));
  on('message', appendMessage);
  on('participant-status', (participant) => {
    state.participants.set(participant.participantId, participant);
    renderParticipants();
    if (participant.participantId === state.me.participantId) {
      if (participant.status === 'kicked') endSpace('The owner removed you from this space.', 'error');
      else if (participant.status === 'left') endSpace('You left this space.');
      else if (participant.status === 'muted')
        notify('send-notice', 'The owner has muted you: you can read, but not send.', 'warn');
      else if (participant.status === 'active') notify('send-notice', '');
    }
  });
  on('context', (context) => {
    state.participants = new Map(context.participants.map((p) => [p.participantId, p]));
    state.artifacts = new Map(context.artifacts.map((a) => [a.id, a]));
    renderParticipants();
    renderArtifacts();
    if ($('messages').children.length === 0)
      $('messages').append(el('li', { class: 'empty' }, 'No messages yet. Say hello.'));
  });
  for (const name of ['artifact-created', 'artifact-updated', 'artifact-locked', 'artifact-unlocked'])
    on(name, (summary) => artifactEvent(name, summary));
  on('space-closed', (event) =>
    endSpace(event.reason === 'expired' ? 'This space has expired.' : 'The owner closed this space.'),
  );
  stream.addEventListener('error', async () => {
    if (state.ended) return;
    if (stream.readyState !== EventSource.CLOSED) {
      setLive('reconnecting…', false);
      return;
    }
    // The server refused the stream (not a dropped connection): ask the API why.
    setLive('disconnected', false);
    try {
      await call('GET', '');
      setTimeout(() => {
        if (!state.ended && state.stream === stream) connectStream();
      }, 3000);
    } catch (error) {
      endSpace(describeError(error), 'error');
    }
  });
}

// --- Documents ---------------------------------------------------------------------------------

function lockHeldBy(summary) {
  if (!summary?.lockedBy) return undefined;
  if (summary.lockExpiresAt && Date.parse(summary.lockExpiresAt) <= Date.now()) return undefined;
  return summary.lockedBy;
}

function renderArtifacts() {
  const list = [...state.artifacts.values()].sort((a, b) => a.name.localeCompare(b.name));
  $('artifacts').replaceChildren(
    ...(list.length
      ? list.map((a) => {
          const holder = lockHeldBy(a);
          return el(
            'li',
            {},
            el(
              'button',
              {
                type: 'button',
                dataset: { artifactId: a.id },
                'aria-current': state.doc?.artifact.id === a.id ? 'true' : undefined,
                onclick: () => openArtifact(a.id),
              },
              el('span', {}, a.name),
              el(
                'span',
                {},
                holder
                  ? el(
                      'span',
                      { class: 'badge locked', title: `locked by ${participantName(holder)}` },
                      holder === state.me.participantId ? 'editing' : 'locked',
                    )
                  : '',
                ' ',
                el('span', { class: 'badge' }, `v${a.version}`),
              ),
            ),
          );
        })
      : [el('li', { class: 'empty' }, 'No documents yet.')]),
  );
  $('new-artifact').hidden = state.ended;
}

function artifactEvent(name, summary) {
  const previous = state.artifacts.get(summary.id);
  state.artifacts.set(summary.id, { ...previous, ...summary });
  if (name === 'artifact-unlocked') {
    const kept = state.artifacts.get(summary.id);
    kept.lockedBy = undefined;
    kept.lockExpiresAt = undefined;
  }
  renderArtifacts();
  const doc = state.doc;
  if (!doc || doc.artifact.id !== summary.id) return;
  if (doc.editing) {
    // Someone else took or released it: the lock is gone for this tab.
    const takenByOther =
      name === 'artifact-locked' && state.me.participantId && summary.lockedBy !== state.me.participantId;
    if (name === 'artifact-unlocked' || takenByOther) lockLost();
    return;
  }
  void refreshArtifact();
}

async function refreshArtifact() {
  const doc = state.doc;
  if (!doc) return;
  try {
    const { body } = await call('GET', `/artifact/${encodeURIComponent(doc.artifact.id)}`);
    if (state.doc !== doc) return;
    doc.artifact = body;
    renderDocument();
  } catch (error) {
    notify('artifact-notice', describeError(error, 'this document'));
  }
}

async function openArtifact(id) {
  if (state.doc?.editing && state.doc.artifact.id !== id) {
    if (!confirm('Stop editing the open document? Unsaved changes are lost and its lock is released.'))
      return;
    await releaseLock();
  }
  try {
    const { body } = await call('GET', `/artifact/${encodeURIComponent(id)}`);
    state.doc = { artifact: body, editing: false };
    notify('artifact-notice', '');
    $('artifact-history').hidden = true;
    $('artifact-history-button').setAttribute('aria-expanded', 'false');
    renderDocument();
    renderArtifacts();
    $('artifact-view').hidden = false;
    $('artifact-view').scrollIntoView({ behavior: 'smooth', block: 'start' });
  } catch (error) {
    notify('space-notice', describeError(error, 'this document'));
  }
}

function renderDocument() {
  const { artifact, editing } = state.doc;
  const holder = lockHeldBy(artifact);
  $('artifact-title').textContent = artifact.name;
  $('artifact-meta').replaceChildren(
    `Version ${artifact.version} · updated by ${participantName(artifact.updatedBy)} `,
    el('time', { datetime: artifact.updatedAt }, formatTime(artifact.updatedAt)),
    holder
      ? ` · ${holder === state.me.participantId ? 'locked by you' : `locked by ${participantName(holder)}`} until ${formatTime(artifact.lockExpiresAt)}`
      : ' · unlocked',
  );
  const lockedByOther = holder && holder !== state.me.participantId;
  $('artifact-lock').hidden = editing && !state.doc.lockLost;
  $('artifact-lock').textContent = state.doc.lockLost ? 'Lock again' : 'Lock and edit';
  $('artifact-lock').disabled = state.ended || (lockedByOther && !state.doc.lockLost);
  $('artifact-save').hidden = !editing;
  $('artifact-unlock').hidden = !editing;
  $('artifact-force-unlock').hidden = !(isOwner() && lockedByOther && !state.ended);
  $('artifact-content-view').hidden = editing;
  $('artifact-editor').hidden = !editing;
  if (!editing) $('artifact-content-view').textContent = artifact.content;
}

async function lockArtifact() {
  const doc = state.doc;
  const id = encodeURIComponent(doc.artifact.id);
  notify('artifact-notice', '');
  try {
    const { body: lock } = await call('POST', `/artifact/${id}/lock`);
    if (doc.editing && doc.lockLost) {
      // Keep the draft; the save's baseVersion says whether someone wrote in between.
      doc.lockLost = false;
    } else {
      const { body } = await call('GET', `/artifact/${id}`);
      doc.artifact = body;
      doc.baseVersion = body.version;
      doc.saved = body.content;
      $('artifact-editor').value = body.content;
    }
    doc.artifact.lockedBy = lock.lockedBy;
    doc.artifact.lockExpiresAt = lock.lockExpiresAt;
    doc.editing = true;
    startHeartbeat(lock.lockExpiresAt);
    renderDocument();
    $('artifact-editor').focus();
  } catch (error) {
    if (error.status === 423) {
      const holder = error.body.lockedBy ? participantName(error.body.lockedBy) : 'someone';
      const until = error.body.lockExpiresAt ? ` until ${formatTime(error.body.lockExpiresAt)}` : '';
      notify(
        'artifact-notice',
        `${holder} is editing this document${until}. Try again when they are done.`,
        'warn',
      );
    } else notify('artifact-notice', describeError(error, 'this document'));
  }
}

function startHeartbeat(expiresAt) {
  clearInterval(state.doc?.heartbeat);
  const ttl = Math.max(10_000, Date.parse(expiresAt) - Date.now());
  // Well before the lock lapses, so a slow network never loses it.
  state.doc.heartbeat = setInterval(heartbeat, Math.max(5_000, Math.floor(ttl / 3)));
}

async function heartbeat() {
  const doc = state.doc;
  if (!doc?.editing) return;
  try {
    const { body } = await call('POST', `/artifact/${encodeURIComponent(doc.artifact.id)}/lock/heartbeat`);
    doc.artifact.lockExpiresAt = body.lockExpiresAt;
    renderDocument();
  } catch (error) {
    if (error.status === 423 || error.status === 401) lockLost();
  }
}

function lockLost() {
  const doc = state.doc;
  if (!doc?.editing || doc.lockLost) return;
  doc.lockLost = true;
  clearInterval(doc.heartbeat);
  notify(
    'artifact-notice',
    'You no longer hold the lock (it lapsed, or the owner released it). Your text is still here: lock again to save it.',
    'warn',
  );
  renderDocument();
}

async function saveArtifact() {
  const doc = state.doc;
  const content = $('artifact-editor').value;
  notify('artifact-notice', '');
  try {
    const { body } = await call('PATCH', `/artifact/${encodeURIComponent(doc.artifact.id)}`, {
      body: { content, baseVersion: doc.baseVersion },
    });
    doc.artifact = body;
    doc.baseVersion = body.version;
    doc.saved = content;
    state.artifacts.set(body.id, { ...state.artifacts.get(body.id), version: body.version });
    startHeartbeat(body.lockExpiresAt ?? new Date(Date.now() + 60_000).toISOString());
    renderDocument();
    renderArtifacts();
    notify('artifact-notice', `Saved as version ${body.version}.`, 'ok');
  } catch (error) {
    if (error.status === 409 && typeof error.body.version === 'number') {
      showConflict(error.body.version);
    } else if (error.status === 423) {
      lockLost();
    } else notify('artifact-notice', describeError(error, 'this document'));
  }
}

/** Someone wrote a newer version since this draft began: let the human choose, never merge silently. */
function showConflict(version) {
  const region = $('artifact-notice');
  notify(
    'artifact-notice',
    `This document changed since you started (it is now version ${version}). Nothing was saved.`,
    'warn',
  );
  region.append(
    el(
      'span',
      { class: 'toolbar' },
      el(
        'button',
        {
          type: 'button',
          class: 'small',
          onclick: async () => {
            const { body } = await call('GET', `/artifact/${encodeURIComponent(state.doc.artifact.id)}`);
            state.doc.artifact = { ...body };
            state.doc.baseVersion = body.version;
            state.doc.saved = body.content;
            $('artifact-editor').value = body.content;
            notify('artifact-notice', `Loaded version ${body.version}. Your draft was discarded.`, 'ok');
            renderDocument();
          },
        },
        `Load version ${version} (discard my draft)`,
      ),
      el(
        'button',
        {
          type: 'button',
          class: 'small',
          onclick: () => {
            state.doc.baseVersion = version;
            notify('artifact-notice', `Your draft replaces version ${version} when you save.`, 'ok');
          },
        },
        'Keep my draft (replace it on save)',
      ),
    ),
  );
}

function stopEditing() {
  if (!state.doc) return;
  clearInterval(state.doc.heartbeat);
  state.doc.editing = false;
  state.doc.lockLost = false;
}

async function releaseLock() {
  const doc = state.doc;
  stopEditing();
  try {
    const { body } = await call('DELETE', `/artifact/${encodeURIComponent(doc.artifact.id)}/lock`);
    doc.artifact = body;
  } catch (error) {
    notify('artifact-notice', describeError(error, 'this document'));
  }
}

const isDirty = () => state.doc?.editing && $('artifact-editor').value !== state.doc.saved;

$('artifact-lock').addEventListener('click', (event) => busy(event.currentTarget, lockArtifact));
$('artifact-save').addEventListener('click', (event) => busy(event.currentTarget, saveArtifact));
$('artifact-unlock').addEventListener('click', (event) =>
  busy(event.currentTarget, async () => {
    if (isDirty() && !confirm('Discard your unsaved changes and release the lock?')) return;
    notify('artifact-notice', '');
    await releaseLock();
    renderDocument();
  }),
);
$('artifact-force-unlock').addEventListener('click', (event) =>
  busy(event.currentTarget, async () => {
    const holder = participantName(lockHeldBy(state.doc.artifact));
    if (!confirm(`Release ${holder}'s lock? Their unsaved changes cannot be saved afterwards.`)) return;
    await releaseLock();
    renderDocument();
  }),
);
$('artifact-close').addEventListener('click', async () => {
  if (state.doc?.editing) {
    if (isDirty() && !confirm('Discard your unsaved changes and release the lock?')) return;
    await releaseLock();
  }
  state.doc = undefined;
  $('artifact-view').hidden = true;
  renderArtifacts();
});

$('artifact-download').addEventListener('click', (event) =>
  busy(event.currentTarget, async () => {
    const { artifact } = state.doc;
    try {
      const { body } = await call('GET', `/artifact/${encodeURIComponent(artifact.id)}/download`, {
        text: true,
      });
      const url = URL.createObjectURL(new Blob([body], { type: 'text/markdown' }));
      const link = el('a', { href: url, download: `${artifact.name.replace(/[\\/:*?"<>|]+/g, '_')}.md` });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (error) {
      notify('artifact-notice', describeError(error, 'this document'));
    }
  }),
);

$('artifact-history-button').addEventListener('click', async (event) => {
  const panel = $('artifact-history');
  const open = panel.hidden;
  panel.hidden = !open;
  event.currentTarget.setAttribute('aria-expanded', String(open));
  if (open) await loadHistory();
});

async function loadHistory() {
  const { artifact } = state.doc;
  const id = encodeURIComponent(artifact.id);
  $('artifact-version-view').hidden = true;
  try {
    const { body } = await call('GET', `/artifact/${id}/versions`);
    $('artifact-versions').replaceChildren(
      ...body.versions.map((v) =>
        el(
          'li',
          {},
          el(
            'span',
            {},
            el('strong', {}, `Version ${v.version}`),
            ` · ${participantName(v.updatedBy)} · `,
            el('time', { datetime: v.updatedAt }, formatTime(v.updatedAt)),
            ` · ${v.size} bytes`,
          ),
          el(
            'button',
            {
              type: 'button',
              class: 'small',
              onclick: () => showVersion(`/artifact/${id}/versions/${v.version}`),
            },
            'View',
          ),
          v.version > 1
            ? el(
                'button',
                {
                  type: 'button',
                  class: 'small',
                  onclick: () =>
                    showVersion(`/artifact/${id}/diff?from=${v.version - 1}&to=${v.version}`, true),
                },
                'Changes',
              )
            : '',
          state.doc.editing && !state.doc.lockLost && v.version !== state.doc.artifact.version
            ? el(
                'button',
                { type: 'button', class: 'small', onclick: () => restoreVersion(v.version) },
                'Restore',
              )
            : '',
        ),
      ),
    );
  } catch (error) {
    notify('artifact-notice', describeError(error, 'this document'));
  }
}

async function showVersion(path, diff = false) {
  try {
    const { body } = await call('GET', path, { text: diff });
    const view = $('artifact-version-view');
    view.textContent = diff ? body || '(no changes)' : body.content;
    view.hidden = false;
  } catch (error) {
    notify('artifact-notice', describeError(error, 'this version'));
  }
}

async function restoreVersion(version) {
  if (isDirty() && !confirm('Restoring replaces your unsaved changes. Go on?')) return;
  try {
    const { body } = await call(
      'POST',
      `/artifact/${encodeURIComponent(state.doc.artifact.id)}/versions/${version}/restore`,
    );
    state.doc.artifact = body;
    state.doc.baseVersion = body.version;
    state.doc.saved = body.content;
    $('artifact-editor').value = body.content;
    renderDocument();
    notify('artifact-notice', `Restored version ${version} as version ${body.version}.`, 'ok');
    await loadHistory();
  } catch (error) {
    notify('artifact-notice', describeError(error, 'this document'));
  }
}

$('artifact-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  await busy(form.querySelector('button'), async () => {
    try {
      const { body } = await call('POST', '/artifact', {
        body: {
          name: $('artifact-name').value.trim(),
          type: 'markdown',
          content: $('artifact-content').value,
        },
      });
      form.reset();
      $('new-artifact').open = false;
      state.artifacts.set(body.id, body);
      renderArtifacts();
      await openArtifact(body.id);
    } catch (error) {
      notify('space-notice', describeError(error, 'this space'));
    }
  });
});

// A closed tab should not keep a document locked for the lock's whole lifetime.
addEventListener('beforeunload', (event) => {
  if (isDirty()) event.preventDefault();
});
addEventListener('pagehide', () => {
  const doc = state.doc;
  if (!doc?.editing || doc.lockLost) return;
  fetch(`${base}/artifact/${encodeURIComponent(doc.artifact.id)}/lock`, {
    method: 'DELETE',
    headers: { 'X-Private-Key': state.me.key },
    keepalive: true,
  }).catch(() => {});
});

// --- Owner and participant actions -------------------------------------------------------------

$('invite-button').addEventListener('click', (event) =>
  busy(event.currentTarget, async () => {
    try {
      const { body } = await call('POST', '/invite');
      $('invite-human').value = body.humanLink;
      $('invite-agent').value = body.agentLink;
      $('invite-result').hidden = false;
      $('invite-human').select();
    } catch (error) {
      notify('space-notice', describeError(error));
    }
  }),
);

$('leave-button').addEventListener('click', (event) =>
  busy(event.currentTarget, async () => {
    if (!confirm('Leave this space? Your key stops working and you would need a new invitation.')) return;
    try {
      await call('POST', '/leave');
      forgetSpaceCredentials(spaceId);
      endSpace('You left this space.', 'ok');
    } catch (error) {
      notify('space-notice', describeError(error));
    }
  }),
);

$('close-space-button').addEventListener('click', (event) =>
  busy(event.currentTarget, async () => {
    if (!confirm('Close this space for everyone? This cannot be undone.')) return;
    try {
      await call('DELETE', '');
    } catch (error) {
      notify('space-notice', describeError(error));
    }
  }),
);

// --- Opening the space -------------------------------------------------------------------------

/**
 * A pasted key says nothing of whose it is, and the API has no "who am I" for a space key.
 * Moderating the owner is refused with 409 to the owner key and 401 to any other, and changes
 * nothing: a safe probe. A participant learns its own id from the first message it sends.
 */
async function identify(me) {
  const owner = [...state.participants.values()].find((p) => p.isOwner);
  if (!owner) return me;
  try {
    await call('POST', `/participants/${encodeURIComponent(owner.participantId)}/approve`);
  } catch (error) {
    if (error.status === 409)
      return { ...me, role: 'owner', participantId: owner.participantId, name: owner.name };
    if (error.status === 401) return { ...me, role: 'participant' };
  }
  return me;
}

async function open(me) {
  state.me = me;
  try {
    const { body } = await call('GET', '');
    state.space = body;
  } catch (error) {
    showNoKey(describeError(error));
    return false;
  }
  state.participants = new Map(state.space.participants.map((p) => [p.participantId, p]));
  if (!me.role && state.space.state === 'open') state.me = await identify(me);
  setSpaceCredentials(spaceId, state.me);
  state.artifacts = new Map(state.space.artifacts.map((a) => [a.id, a]));
  $('no-key').hidden = true;
  $('space-layout').hidden = false;
  notify('space-notice', '');
  renderParticipants();
  renderArtifacts();
  if (state.space.state === 'closed') {
    endSpace('This space has closed.');
    return true;
  }
  connectStream();
  setInterval(() => {
    if (state.ended) return;
    state.space.ttlRemaining = Math.max(0, state.space.ttlRemaining - 30);
    renderSpace();
  }, 30_000);
  return true;
}

function showNoKey(problem) {
  $('no-key').hidden = false;
  $('space-layout').hidden = true;
  $('live').textContent = '';
  if (problem) notify('space-notice', problem);
  const session = getSession();
  $('recover-key').hidden = !session;
}

$('key-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const key = $('key-input').value.trim();
  if (key) await busy(event.currentTarget.querySelector('button'), () => open({ key }));
});

$('recover-key').addEventListener('click', (event) =>
  busy(event.currentTarget, async () => {
    const session = getSession();
    if (!session) return;
    try {
      const { body } = await api('GET', `${base}/key`, { bearer: session.token });
      const { body: mine } = await api('GET', '/hub/me/spaces', { bearer: session.token });
      const entry = mine.spaces.find((s) => s.spaceId === spaceId && s.role === body.role);
      await open({ key: body.privateKey, role: body.role, participantId: entry?.participantId });
    } catch (error) {
      notify('space-notice', describeError(error, 'your key for this space'));
    }
  }),
);

const kept = getSpaceCredentials(spaceId);
if (kept?.key) void open(kept);
else showNoKey();
