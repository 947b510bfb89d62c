// Documents: the list, opening one, following its changes, its history (versions, changes,
// restore), download, and creating one. Editing it under its lock is the editor's (./editor.ts).
import type { ArtifactSummary, StreamEventName } from '@convene/sdk';
import { shownName } from '../../lib/bidi';
import { $, busy, confirmed, el, isolated, notify, replaceItems, submitButton } from '../../lib/dom';
import { describeError } from '../../lib/errors';
import { formatTime } from '../../lib/format';
import {
  checkLock,
  isDirty,
  releaseLock,
  renderDocument,
  renderVersionButtons,
  restoreVersion,
  wireEditor,
} from './editor';
import { lockHolder, participantName, space, state } from './state';

export type ArtifactEventName = Extract<StreamEventName, `artifact-${string}`>;

export function renderArtifacts(): void {
  const list = [...state.artifacts.values()].sort((a, b) => a.name.localeCompare(b.name));
  replaceItems(
    $('artifacts'),
    list.length
      ? list.map((a) => {
          const holder = lockHolder(a);
          return el(
            'li',
            { dataset: { key: a.id } },
            el(
              'button',
              {
                type: 'button',
                dataset: { artifactId: a.id },
                'aria-current': state.doc?.artifact.id === a.id ? 'true' : undefined,
              },
              el('span', {}, isolated(a.name)),
              el(
                'span',
                {},
                holder &&
                  el(
                    'span',
                    { class: 'badge locked', title: `locked by ${participantName(holder)}` },
                    holder === state.me.participantId ? 'editing' : 'locked',
                  ),
                ' ',
                el('span', { class: 'badge' }, `v${a.version}`),
              ),
            ),
          );
        })
      : [el('li', { class: 'empty' }, 'No documents yet.')],
    $('artifacts-title'),
  );
  $('new-artifact').hidden = state.ended;
}

async function openArtifact(id: string): Promise<void> {
  if (state.doc?.editing && state.doc.artifact.id !== id) {
    if (!confirmed('Stop editing the open document? Unsaved changes are lost and its lock is released.'))
      return;
    await releaseLock();
  }
  try {
    const artifact = await space().artifacts.get(id);
    state.doc = { artifact, editing: false, lockLost: false };
    notify('artifact-notice', '');
    $('artifact-history').hidden = true;
    $('artifact-history-button').setAttribute('aria-expanded', 'false');
    renderDocument();
    renderArtifacts();
    $('artifact-view').hidden = false;
    $('artifact-view').scrollIntoView({ behavior: 'smooth', block: 'start' });
    // The keyboard goes with the eye: to the document, not back to the start of the page.
    $('artifact-title').focus({ preventScroll: true });
  } catch (error) {
    notify('space-notice', describeError(error, 'this document'));
  }
}

/**
 * Says why a look at the open document failed, unless the space ended for this tab meanwhile: its
 * notice then says what became of the draft, which a 401 must not replace.
 */
function sayDocumentError(error: unknown, what = 'this document'): void {
  if (!state.ended) notify('artifact-notice', describeError(error, what));
}

/**
 * Shows the open document as it is now. While it is edited here only its version line follows:
 * the draft and the lock are this tab's.
 */
async function refreshArtifact(): Promise<void> {
  const doc = state.doc;
  if (!doc) return;
  try {
    const artifact = await space().artifacts.get(doc.artifact.id);
    if (state.doc !== doc) return;
    const { version, updatedBy, updatedAt } = artifact;
    doc.artifact = doc.editing ? { ...doc.artifact, version, updatedBy, updatedAt } : artifact;
    renderDocument();
  } catch (error) {
    sayDocumentError(error);
  }
}

/** The stream's news of an artifact: the list, and the open document if it is this one. */
export function artifactChanged(name: ArtifactEventName, summary: ArtifactSummary): void {
  const kept = { ...state.artifacts.get(summary.id), ...summary };
  if (name === 'artifact-unlocked') {
    kept.lockedBy = undefined;
    kept.lockExpiresAt = undefined;
  }
  state.artifacts.set(summary.id, kept);
  renderArtifacts();
  const doc = state.doc;
  // The space ended for this tab: its key would only get a 401 for the open document.
  if (!doc || doc.artifact.id !== summary.id || state.ended) return;
  // An open list of versions follows: a new version, and what a lock change allows (Restore).
  if (!$('artifact-history').hidden) void loadHistory({ keepShown: true });
  if (doc.editing) {
    // Someone else took or released it: the lock may be gone for this tab.
    const takenByOther =
      name === 'artifact-locked' && state.me.participantId && summary.lockedBy !== state.me.participantId;
    if (name === 'artifact-unlocked' || takenByOther) void checkLock();
    if (name !== 'artifact-updated') return;
  }
  void refreshArtifact();
}

/**
 * Lists the open document's versions; `keepShown`: the version or changes on view stay (the list
 * is brought up to date under them), else they are put away (the list was just opened).
 */
async function loadHistory({ keepShown = false } = {}): Promise<void> {
  const doc = state.doc;
  if (!doc) return;
  const id = doc.artifact.id;
  if (!keepShown) {
    $('artifact-version-view').hidden = true;
    $('artifact-version-title').hidden = true;
  }
  try {
    const { versions } = await space().artifacts.history(id);
    // Another document opened meanwhile: this list is not its.
    if (state.doc !== doc) return;
    $('artifact-versions').replaceChildren(
      ...versions.map((v) =>
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
              'aria-label': `View version ${v.version}`,
              onclick: () =>
                showVersion(
                  `Version ${v.version}`,
                  async () => (await space().artifacts.version(id, v.version)).content,
                ),
            },
            'View',
          ),
          v.version > 1 &&
            el(
              'button',
              {
                type: 'button',
                class: 'small',
                'aria-label': `Changes in version ${v.version}`,
                onclick: () =>
                  showVersion(`Changes from version ${v.version - 1} to version ${v.version}`, async () =>
                    diffLines((await space().artifacts.diff(id, v.version - 1, v.version)) || '(no changes)'),
                  ),
              },
              'Changes',
            ),
          // Shown to the lock holder only (renderVersionButtons), as the lock comes and goes.
          el(
            'button',
            {
              type: 'button',
              class: 'small',
              dataset: { restore: String(v.version) },
              'aria-label': `Restore version ${v.version}`,
              onclick: async () => {
                if (await restoreVersion(v.version)) await loadHistory();
              },
            },
            'Restore',
          ),
        ),
      ),
    );
    renderVersionButtons();
  } catch (error) {
    sayDocumentError(error);
  }
}

/** Bytes a quoted name writes as escapes other than octal ones (`\t`), as git and jsdiff do. */
const ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13 };

/**
 * A header line whose document name the diff quoted as git does (`--- "Q3 \"draft\" \303\274.md"`:
 * every byte beyond ASCII in octal) with that name as it reads (`--- Q3 "draft" ü.md`). The diff
 * itself is the API's, unchanged.
 */
const readableHeader = (line: string): string =>
  line.replace(/^(---|\+\+\+) "((?:[^"\\]|\\.)*)"/, (_, mark: string, quoted: string) => {
    const bytes: number[] = [];
    for (const [, escaped, plain] of quoted.matchAll(/\\([0-7]{3}|.)|([^\\]+)/g)) {
      if (plain) bytes.push(...new TextEncoder().encode(plain));
      else if (escaped)
        bytes.push(
          escaped.length === 3 ? Number.parseInt(escaped, 8) : (ESCAPES[escaped] ?? escaped.charCodeAt(0)),
        );
    }
    return `${mark} ${shownName(new TextDecoder().decode(new Uint8Array(bytes)))}`;
  });

/**
 * A unified diff as lines a person can read at a glance: added lines marked green, removed ones
 * red, and the headers and `@@` lines of where each change is, dimmed. Each line is a block of its
 * own, so that a copy of the view is the patch, line for line.
 */
function diffLines(diff: string): Node[] {
  return diff
    .replace(/\n$/, '')
    .split('\n')
    .map((line, i) => {
      const kind = /^(\+\+\+|---|@@)/.test(line)
        ? 'diff-meta'
        : line.startsWith('+')
          ? 'diff-add'
          : line.startsWith('-')
            ? 'diff-del'
            : 'diff-context';
      return el('span', { class: `diff-line ${kind}` }, i < 2 ? readableHeader(line) : line);
    });
}

/** Shows a version (its text), or the changes between two (diffLines), under a title that says which. */
async function showVersion(title: string, read: () => Promise<string | Node[]>): Promise<void> {
  try {
    const view = $('artifact-version-view');
    const shown = await read();
    if (typeof shown === 'string') view.textContent = shown;
    else view.replaceChildren(...shown);
    $('artifact-version-title').textContent = title;
    $('artifact-version-title').hidden = false;
    view.hidden = false;
  } catch (error) {
    sayDocumentError(error, 'this version');
  }
}

async function download(): Promise<void> {
  const artifact = state.doc?.artifact;
  if (!artifact) return;
  try {
    const markdown = await space().artifacts.download(artifact.id);
    const url = URL.createObjectURL(new Blob([markdown], { type: 'text/markdown' }));
    const link = el('a', {
      href: url,
      download: `${artifact.name.replace(/[\\/:*?"<>|\u200e\u200f\u202a-\u202e\u2066-\u2069]+/g, '_')}.md`,
    });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  } catch (error) {
    sayDocumentError(error);
  }
}

export function wireDocuments(): void {
  wireEditor({ onSaved: renderArtifacts });

  $('artifacts').addEventListener('click', (event) => {
    const button = event.target instanceof Element ? event.target.closest('button[data-artifact-id]') : null;
    if (button instanceof HTMLButtonElement && button.dataset.artifactId)
      void openArtifact(button.dataset.artifactId);
  });

  $('artifact-close').addEventListener('click', async () => {
    const editing = state.doc?.editing;
    const discard = editing
      ? 'Discard your unsaved changes and release the lock?'
      : 'Discard your unsaved text?';
    if (isDirty() && !confirmed(discard)) return;
    if (editing) await releaseLock();
    const id = state.doc?.artifact.id;
    state.doc = undefined;
    $('artifact-view').hidden = true;
    renderArtifacts();
    // The keyboard goes back to where the document was opened from: it was left on the page's body.
    $('artifacts').querySelector<HTMLElement>(`button[data-artifact-id="${id}"]`)?.focus();
  });

  $('artifact-download').addEventListener('click', (event) => busy(event.currentTarget, download));

  $('artifact-history-button').addEventListener('click', async (event) => {
    const panel = $('artifact-history');
    const open = panel.hidden;
    panel.hidden = !open;
    if (event.currentTarget instanceof Element)
      event.currentTarget.setAttribute('aria-expanded', String(open));
    if (open) await loadHistory();
  });

  const form = $('artifact-form', HTMLFormElement);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    await busy(submitButton(form), async () => {
      const name = $('artifact-name', HTMLInputElement).value.trim();
      // A second document of a name would leave two alike in the list (the CLI refuses it too).
      const existing = [...state.artifacts.values()].find((a) => a.name.toLowerCase() === name.toLowerCase());
      if (existing) {
        notify(
          'artifact-form-notice',
          `There is already a document called “${shownName(existing.name)}”: open it from the list, or choose another name.`,
        );
        $('artifact-name').focus();
        return;
      }
      notify('artifact-form-notice', '');
      try {
        const created = await space().artifacts.create({
          name,
          content: $('artifact-content', HTMLTextAreaElement).value,
        });
        form.reset();
        $('new-artifact', HTMLDetailsElement).open = false;
        state.artifacts.set(created.id, created);
        renderArtifacts();
        await openArtifact(created.id);
      } catch (error) {
        notify('space-notice', describeError(error, 'this space'));
      }
    });
  });
}
