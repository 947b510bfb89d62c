// The editor: the open document's panel, and editing it under its exclusive lock (lock, keep it
// alive, save with baseVersion, resolve a conflict, release). Documents (the list, opening,
// history) sit above this module and call into it.
import { ConflictError, Convene, LockedError } from '@convene/sdk';
import { shownName } from '../../lib/bidi';
import { $, busy, confirmed, el, isolated, notify } from '../../lib/dom';
import { describeError, statusOf } from '../../lib/errors';
import { formatTime } from '../../lib/format';
import { isMuted, isOwner, lockHolder, participantName, space, spaceId, state } from './state';

const editor = () => $('artifact-editor', HTMLTextAreaElement);

/** After this long without an edit, an open editor stops renewing its lock and lets it lapse. */
const IDLE_MS = 5 * 60_000;

/** Whether the open document has changes that are not saved (or, the space ended, can no longer be). */
export const isDirty = (): boolean =>
  Boolean((state.doc?.editing || state.doc?.draftKept) && editor().value !== state.doc.saved);

/** What the document's notice said of a lock refused, someone else editing; '' once it is over. */
let heldSaid = '';

/** Shows the open document: its meta line, the toolbar this tab may use, the text or the editor. */
export function renderDocument(): void {
  const doc = state.doc;
  if (!doc) return;
  const { artifact, editing } = doc;
  const holder = lockHolder(artifact);
  const mine = holder !== undefined && holder === state.me.participantId;
  $('artifact-title').textContent = shownName(artifact.name);
  $('artifact-meta').replaceChildren(
    // Someone wrote since the draft began: its save will say so, this says it first.
    editing && doc.baseVersion !== artifact.version
      ? `Version ${artifact.version} (your draft started from version ${doc.baseVersion}) · updated by `
      : `Version ${artifact.version} · updated by `,
    isolated(participantName(artifact.updatedBy)),
    ' ',
    el('time', { datetime: artifact.updatedAt }, formatTime(artifact.updatedAt)),
    ...(holder
      ? [
          ' · locked by ',
          mine ? 'you' : isolated(participantName(holder)),
          ` until ${formatTime(artifact.lockExpiresAt)}`,
        ]
      : [' · unlocked']),
  );
  const lockedByOther = holder !== undefined && !mine;
  // A refusal said while someone else edited is over once they are done: said so, in its place.
  if (!lockedByOther && heldSaid !== '' && $('artifact-notice').textContent === heldSaid) {
    heldSaid = '';
    notify('artifact-notice', 'The document is free now: Lock and edit to change it.', 'ok');
  }
  const lock = $('artifact-lock', HTMLButtonElement);
  lock.hidden = editing && !doc.lockLost;
  lock.textContent = doc.lockLost ? 'Lock again' : 'Lock and edit';
  // Muted, a lock already yours still lets you write and release it (decisions.md): resume it.
  lock.disabled = state.ended || (isMuted() && !mine) || (lockedByOther && !doc.lockLost);
  // The space ended for this tab: its key opens nothing any more, so nothing asks the API with it
  // (a 401 would take the place of what the notices say of the draft).
  $('artifact-download', HTMLButtonElement).disabled = state.ended;
  $('artifact-history-button', HTMLButtonElement).disabled = state.ended;
  renderVersionButtons();
  // Saving needs the lock: while it is lost, "Lock again" is the way on.
  $('artifact-save').hidden = !editing || doc.lockLost;
  $('artifact-unlock').hidden = !editing;
  $('artifact-force-unlock').hidden = !(isOwner() && lockedByOther && !state.ended);
  // A draft the space's end left unsaved stays on screen, read-only, for the human to copy.
  const draft = editing || doc.draftKept === true;
  $('artifact-content-view').hidden = draft;
  editor().hidden = !draft;
  editor().readOnly = !editing;
  if (!draft) $('artifact-content-view').textContent = artifact.content;
}

/**
 * What the open list of versions offers, as the lock and the space change (without asking the
 * API again): Restore to the lock holder only, for any version but the current one; nothing once
 * the space has ended for this tab.
 */
export function renderVersionButtons(): void {
  const doc = state.doc;
  const restoring = doc?.editing === true && !doc.lockLost;
  for (const button of $('artifact-versions').querySelectorAll('button')) {
    button.disabled = state.ended;
    const version = button.dataset.restore;
    if (version !== undefined) button.hidden = !restoring || Number(version) === doc?.artifact.version;
  }
}

/** Puts `content` in the editor as the saved state of `version`. */
function loadDraft(content: string, version: number): void {
  if (!state.doc) return;
  state.doc.baseVersion = version;
  state.doc.saved = content;
  editor().value = content;
}

async function lockArtifact(): Promise<void> {
  const doc = state.doc;
  if (!doc) return;
  notify('artifact-notice', '');
  try {
    // Muted, a lock is not taken but one already held is kept alive (a heartbeat).
    const id = doc.artifact.id;
    const kept = isMuted() && lockHolder(doc.artifact) === state.me.participantId;
    const lock = await (kept ? space().artifacts.heartbeat(id) : space().artifacts.lock(id));
    if (doc.editing && doc.lockLost) {
      // Keep the draft; the save's baseVersion says whether someone wrote in between.
      doc.lockLost = false;
    } else {
      doc.artifact = await space().artifacts.get(id);
      loadDraft(doc.artifact.content, doc.artifact.version);
    }
    doc.artifact.lockedBy = lock.lockedBy;
    doc.artifact.lockExpiresAt = lock.lockExpiresAt;
    doc.taken = (doc.taken ?? 0) + 1;
    doc.editing = true;
    doc.editedAt = Date.now();
    doc.idle = false;
    startHeartbeat(lock.lockExpiresAt);
    renderDocument();
    editor().focus();
  } catch (error) {
    if (error instanceof LockedError) {
      const holder = error.lockedBy ? participantName(error.lockedBy) : 'someone';
      const until = error.lockExpiresAt ? ` until ${formatTime(error.lockExpiresAt)}` : '';
      heldSaid = `${holder} is editing this document${until}. Try again when they are done.`;
      notify('artifact-notice', heldSaid, 'warn');
      // The stream may not have told of that lock yet: shown, and Lock disabled, until it ends
      // (drawn once the button's busy state is over: see the click's handler).
      if (error.lockedBy && doc === state.doc) {
        doc.artifact.lockedBy = error.lockedBy;
        doc.artifact.lockExpiresAt = error.lockExpiresAt;
      }
    } else notify('artifact-notice', describeError(error, 'this document'));
  }
}

function startHeartbeat(expiresAt: string): void {
  const doc = state.doc;
  if (!doc) return;
  clearInterval(doc.heartbeat);
  const ttl = Math.max(10_000, Date.parse(expiresAt) - Date.now());
  // Well before the lock lapses, so a slow network never loses it.
  doc.heartbeat = setInterval(renew, Math.max(5_000, Math.floor(ttl / 3)));
}

/**
 * The heartbeat's tick: it renews the lock while the human edits. After IDLE_MS without an edit
 * the lock is left to lapse (an open tab held it for ever, and others waited), and the page says
 * so while it still holds; a lapsed lock is asked about, and the server's 423 says it is lost.
 */
function renew(): void {
  const doc = state.doc;
  if (!doc) return;
  const lapses = doc.artifact.lockExpiresAt;
  if (Date.now() - (doc.editedAt ?? 0) < IDLE_MS || Date.parse(lapses ?? '') <= Date.now()) {
    void heartbeat();
    return;
  }
  if (doc.idle) return;
  doc.idle = true;
  notify(
    'artifact-notice',
    `You have not edited for 5 minutes, so your lock is no longer renewed: it lapses at ${formatTime(lapses)} unless you type.`,
    'warn',
  );
}

async function heartbeat(): Promise<void> {
  const doc = state.doc;
  if (!doc?.editing || doc.releasing) return;
  const taken = doc.taken;
  try {
    const lock = await space().artifacts.heartbeat(doc.artifact.id);
    doc.artifact.lockExpiresAt = lock.lockExpiresAt;
    // Renewed: what a renewal without answer said is over.
    if (unrenewedSaid && $('artifact-notice').textContent === unrenewedSaid) notify('artifact-notice', '');
    unrenewedSaid = '';
    renderDocument();
  } catch (error) {
    // Refused for a lock this tab has taken again since it asked: not about the lock it holds.
    if (doc.taken !== taken) return;
    const status = statusOf(error);
    if (status === 423 || status === 401) lockLost(error);
    else if (status === undefined || status >= 500) unrenewed(error);
  }
}

/**
 * A renewal got no answer (or a 5xx): the lock lapses at its time unless a later one is answered,
 * and once that time is past it has lapsed (the draft stays, as for any lock lost).
 */
function unrenewed(error: unknown): void {
  const lapses = state.doc?.artifact.lockExpiresAt;
  if (!lapses || Date.parse(lapses) <= Date.now()) {
    lockLost(error);
    return;
  }
  unrenewedSaid = `${describeError(error, 'this document')} Your lock is not renewed meanwhile: it lapses at ${formatTime(lapses)}.`;
  notify('artifact-notice', unrenewedSaid, 'warn');
}

/** What `unrenewed` said last, taken back when a renewal is answered. */
let unrenewedSaid = '';

/** Whether the document's notice says the lock goes unrenewed: only an answered renewal ends that. */
export const saysUnrenewed = (): boolean =>
  unrenewedSaid !== '' && $('artifact-notice').textContent === unrenewedSaid;

/**
 * The stream says the document being edited was unlocked, or locked by someone else. The event
 * may be older than this tab's own lock (taken again while the event was on its way), so the
 * server, not the event, says whether the lock is lost: a heartbeat keeps it or is refused.
 */
export const checkLock = (): Promise<void> => heartbeat();

/**
 * The lock is gone for this tab (lapsed, taken, or released by the owner); the draft stays. The
 * refusal says who holds it now, if anyone: the page stops saying "locked by you".
 */
function lockLost(refusal: unknown): void {
  const doc = state.doc;
  if (!doc?.editing) return;
  const taken = refusal instanceof LockedError && refusal.lockedBy ? refusal : undefined;
  doc.artifact.lockedBy = taken?.lockedBy;
  doc.artifact.lockExpiresAt = taken?.lockExpiresAt;
  doc.lockLost = true;
  doc.idle = false;
  clearInterval(doc.heartbeat);
  notify(
    'artifact-notice',
    taken
      ? `You no longer hold the lock: ${participantName(taken.lockedBy)} has it now. Your text is still here: lock again when they are done to save it.`
      : `You no longer hold the lock (${isOwner() ? 'it lapsed, or your key released it elsewhere' : 'it lapsed, or the owner released it'}). Your text is still here: lock again to save it.`,
    'warn',
  );
  renderDocument();
}

async function saveArtifact(onSaved: () => void): Promise<void> {
  const doc = state.doc;
  if (!doc) return;
  const content = editor().value;
  notify('artifact-notice', '');
  try {
    const saved = await space().artifacts.write(doc.artifact.id, content, {
      ...(doc.baseVersion === undefined ? {} : { baseVersion: doc.baseVersion }),
    });
    doc.artifact = saved;
    doc.editedAt = Date.now();
    loadDraft(content, saved.version);
    const summary = state.artifacts.get(saved.id);
    if (summary) state.artifacts.set(saved.id, { ...summary, version: saved.version });
    startHeartbeat(saved.lockExpiresAt ?? new Date(Date.now() + 60_000).toISOString());
    renderDocument();
    onSaved();
    notify('artifact-notice', `Saved as version ${saved.version}.`, 'ok');
  } catch (error) {
    if (error instanceof ConflictError && typeof error.body?.version === 'number')
      showConflict(error.body.version);
    else if (error instanceof LockedError) lockLost(error);
    else notify('artifact-notice', describeError(error, 'this document'));
  }
}

/** Someone wrote a newer version since this draft began: let the human choose, never merge silently. */
function showConflict(version: number): void {
  notify(
    'artifact-notice',
    `This document changed since you started (it is now version ${version}). Nothing was saved.`,
    'warn',
  );
  const reload = async () => {
    const doc = state.doc;
    if (!doc) return;
    try {
      doc.artifact = await space().artifacts.get(doc.artifact.id);
      loadDraft(doc.artifact.content, doc.artifact.version);
      notify('artifact-notice', `Loaded version ${doc.artifact.version}. Your draft was discarded.`, 'ok');
      renderDocument();
    } catch (error) {
      notify('artifact-notice', describeError(error, 'this document'));
    }
  };
  const keep = () => {
    if (state.doc) state.doc.baseVersion = version;
    notify('artifact-notice', `Your draft replaces version ${version} when you save.`, 'ok');
  };
  $('artifact-notice').append(
    el(
      'span',
      { class: 'toolbar' },
      el(
        'button',
        { type: 'button', class: 'small', onclick: reload },
        `Load version ${version} (discard my draft)`,
      ),
      el('button', { type: 'button', class: 'small', onclick: keep }, 'Keep my draft (replace it on save)'),
    ),
  );
}

/** Stops editing here (heartbeats too) without telling the server. */
export function stopEditing(): void {
  if (!state.doc) return;
  clearInterval(state.doc.heartbeat);
  state.doc.editing = false;
  state.doc.lockLost = false;
}

/**
 * The space ended for this tab (closed, expired, left, removed): editing stops, and the lock this
 * tab held went with it (the server releases it). Unsaved text stays on screen, read-only, to be
 * copied, as when a lock is lost: it is never taken away without a word.
 */
export function spaceEnded(): void {
  const doc = state.doc;
  // The locks this tab held went with the space (no event says so when it expires): the list and
  // the open document both say them gone.
  for (const artifact of [...state.artifacts.values(), ...(doc ? [doc.artifact] : [])])
    if (lockHolder(artifact) === state.me.participantId) {
      artifact.lockedBy = undefined;
      artifact.lockExpiresAt = undefined;
    }
  if (!doc) return;
  const unsaved = isDirty();
  stopEditing();
  // What was said of the document before ("Saved as version 8") is over with the space.
  notify('artifact-notice', '');
  if (!unsaved) return;
  doc.draftKept = true;
  notify(
    'artifact-notice',
    'This document can no longer be saved here. Your unsaved text is still below: copy it to keep it.',
    'warn',
  );
}

/**
 * Releases the lock (the owner's force-unlock too, but of a lock taken from this tab's draft:
 * `forceUnlock`) and stops editing. `keepIfUnanswered`: a
 * release the server may not have done (no answer, a 5xx) leaves the editor open, text and lock
 * with it, to try again ("Done editing"); where the document is being left all the same, editing
 * stops either way, and a lock left behind lapses. A refusal (the lock was lost already) stops it.
 */
export async function releaseLock({ keepIfUnanswered = false } = {}): Promise<void> {
  const doc = state.doc;
  if (!doc) return;
  // No heartbeat meanwhile: one answered after the release would read as the lock lost.
  clearInterval(doc.heartbeat);
  doc.releasing = true;
  try {
    doc.artifact = await space().artifacts.unlock(doc.artifact.id);
    stopEditing();
  } catch (error) {
    const status = statusOf(error);
    const unanswered = status === undefined || status >= 500;
    if (keepIfUnanswered && unanswered && doc.editing && !doc.lockLost) {
      startHeartbeat(doc.artifact.lockExpiresAt ?? new Date().toISOString());
      notify(
        'artifact-notice',
        `${describeError(error, 'this document')} The lock was not released: you are still editing.`,
      );
    } else {
      stopEditing();
      notify('artifact-notice', describeError(error, 'this document'));
    }
  } finally {
    doc.releasing = false;
  }
}

/**
 * The owner releases the lock another took from under this tab's draft (its own lock lost): the
 * draft stays in the editor, to be locked again and saved.
 */
async function forceUnlock(): Promise<void> {
  const doc = state.doc;
  if (!doc) return;
  try {
    doc.artifact = await space().artifacts.unlock(doc.artifact.id);
    notify('artifact-notice', 'The lock is released. Your text is still here: lock again to save it.', 'ok');
  } catch (error) {
    notify('artifact-notice', describeError(error, 'this document'));
  }
}

/** Writes a former version's content as the next version (lock holder only). */
export async function restoreVersion(version: number): Promise<boolean> {
  const doc = state.doc;
  if (!doc) return false;
  if (isDirty() && !confirmed('Restoring replaces your unsaved changes. Go on?')) return false;
  try {
    doc.artifact = await space().artifacts.restore(doc.artifact.id, version);
    loadDraft(doc.artifact.content, doc.artifact.version);
    renderDocument();
    notify('artifact-notice', `Restored version ${version} as version ${doc.artifact.version}.`, 'ok');
    // Back to the text: left on the history, Enter would restore the next row's version too.
    editor().focus();
    return true;
  } catch (error) {
    notify('artifact-notice', describeError(error, 'this document'));
    return false;
  }
}

/**
 * A client whose requests outlive the page (fetch keepalive), without retries: what a closing
 * tab can still send.
 */
const parting = new Convene({
  baseUrl: location.origin,
  maxRetries: 0,
  fetch: (input, init) => fetch(input, { ...init, keepalive: true }),
});

/** Wires the editor's toolbar; `onSaved` runs after each save (the documents list shows the new version). */
export function wireEditor({ onSaved }: { onSaved: () => void }): void {
  $('artifact-lock').addEventListener('click', async (event) => {
    await busy(event.currentTarget, lockArtifact);
    // Refused, the holder's lock is drawn and Lock disabled: the keyboard goes to what says why.
    renderDocument();
    const notice = $('artifact-notice');
    if ($('artifact-lock', HTMLButtonElement).disabled && !notice.hidden) {
      notice.tabIndex = -1;
      notice.focus();
    }
  });
  $('artifact-save').addEventListener('click', (event) =>
    busy(event.currentTarget, () => saveArtifact(onSaved)),
  );
  $('artifact-unlock').addEventListener('click', (event) =>
    busy(event.currentTarget, async () => {
      if (isDirty() && !confirmed('Discard your unsaved changes and release the lock?')) return;
      notify('artifact-notice', '');
      await releaseLock({ keepIfUnanswered: true });
      renderDocument();
    }),
  );
  $('artifact-force-unlock').addEventListener('click', (event) =>
    busy(event.currentTarget, async () => {
      const holder = participantName(lockHolder(state.doc?.artifact));
      const draft = state.doc?.editing ? ' Your own text stays here: lock again to save it.' : '';
      if (
        !confirmed(
          `Release ${holder}'s lock? They can save their changes only after locking it again.${draft}`,
        )
      )
        return;
      await (draft ? forceUnlock() : releaseLock());
      renderDocument();
    }),
  );

  // Ctrl+S (⌘S) saves the document, as in any editor, instead of the browser saving the page.
  editor().addEventListener('keydown', (event) => {
    if (event.key.toLowerCase() !== 's' || !(event.ctrlKey || event.metaKey) || event.altKey) return;
    event.preventDefault();
    const save = $('artifact-save', HTMLButtonElement);
    if (!save.hidden && !save.disabled) save.click();
  });

  // Typing keeps the lock: at once when the page had said it would lapse.
  editor().addEventListener('input', () => {
    const doc = state.doc;
    if (!doc) return;
    doc.editedAt = Date.now();
    if (!doc.idle) return;
    doc.idle = false;
    notify('artifact-notice', '');
    void heartbeat();
  });

  addEventListener('beforeunload', (event) => {
    if (!isDirty()) return;
    event.preventDefault();
    // What browsers before preventDefault() read.
    event.returnValue = true;
  });
  // A closed tab should not keep a document locked for the lock's whole lifetime.
  addEventListener('pagehide', () => {
    const doc = state.doc;
    if (!doc?.editing || doc.lockLost) return;
    parting
      .space(spaceId, state.me.key)
      .artifacts.unlock(doc.artifact.id)
      .catch(() => {});
  });
}
