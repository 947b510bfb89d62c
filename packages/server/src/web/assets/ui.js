// DOM helpers shared by the pages. User data goes into the page as text (textContent, attribute
// values); the one exception is a message of type html, which goes through DOMPurify first.

import { getSession } from '/web/api.js';
import DOMPurify from '/web/purify.js';

export const $ = (id) => document.getElementById(id);

/**
 * Builds an element: `el('li', { class: 'x', dataset: { id } }, 'text', child)`. Strings become
 * text nodes, never markup.
 */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') node.className = value;
    else if (name === 'dataset') Object.assign(node.dataset, value);
    else if (name.startsWith('on') && typeof value === 'function')
      node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Shows a message in a page's notice region; `kind` is 'error', 'ok', 'warn' or ''. */
export function notify(id, text, kind = 'error') {
  const region = $(id);
  if (!region) return;
  if (!text) {
    region.hidden = true;
    region.textContent = '';
    return;
  }
  region.className = `notice ${kind}`;
  region.setAttribute('role', kind === 'error' ? 'alert' : 'status');
  region.textContent = text;
  region.hidden = false;
}

/** Runs an async action with its button disabled, so a double click cannot send twice. */
export async function busy(button, action) {
  if (button) button.disabled = true;
  try {
    return await action();
  } finally {
    if (button) button.disabled = false;
  }
}

/** Every `[data-copy=id]` button copies the text of the element with that id. */
export function wireCopyButtons(root = document) {
  root.addEventListener('click', async (event) => {
    const button = event.target.closest?.('button[data-copy]');
    if (!button) return;
    const source = $(button.dataset.copy);
    if (!source) return;
    const text = 'value' in source ? source.value : source.textContent;
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Without the clipboard API (plain http on another host), select the text for Ctrl+C.
      const range = document.createRange();
      range.selectNodeContents(source);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      if ('select' in source) source.select();
    }
    const label = button.textContent;
    button.textContent = 'Copied';
    setTimeout(() => {
      button.textContent = label;
    }, 1500);
  });
}

/** The navigation shows who is logged in. */
export function renderSessionNav() {
  const slot = $('session-nav');
  const session = getSession();
  if (!slot || !session) return;
  slot.replaceChildren(
    el('span', { class: 'meta', title: session.user?.email }, session.user?.name ?? 'you'),
  );
}

export const formatTime = (iso) => {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const sameDay = date.toDateString() === new Date().toDateString();
  return sameDay
    ? date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
    : date.toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
};

export function formatDuration(seconds) {
  if (seconds <= 0) return 'expired';
  if (seconds < 90) return `${seconds} s left`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min left`;
  if (seconds < 48 * 3600) return `${Math.round(seconds / 3600)} h left`;
  return `${Math.round(seconds / 86400)} days left`;
}

export const STATUS_LABELS = {
  waitingForApproval: 'waiting for approval',
  active: 'active',
  muted: 'muted',
  left: 'left',
  kicked: 'removed',
};

export function avatar(participant, small = false) {
  return el('img', {
    class: small ? 'avatar small' : 'avatar',
    src: participant.avatarUrl,
    alt: '',
    width: small ? 28 : 36,
    height: small ? 28 : 36,
    loading: 'lazy',
  });
}

// --- Message content ---------------------------------------------------------------------------

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  // Links in messages leave the page without telling the other site where they came from.
  if (node.tagName === 'A' && node.hasAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
  }
  if (node.tagName === 'IMG' && !isImageSource(node.getAttribute('src') ?? '')) node.removeAttribute('src');
});

const SANITIZE = {
  USE_PROFILES: { html: true },
  // Inline style is refused by the page's CSP anyway; forms and media have no place in a message.
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'video', 'audio', 'source'],
  FORBID_ATTR: ['style', 'srcset'],
};

/** Sanitised markup of an html message, as a fragment (never the raw content). */
export function sanitizedFragment(html) {
  return DOMPurify.sanitize(html, { ...SANITIZE, RETURN_DOM_FRAGMENT: true });
}

/** An image message is shown only for an https: URL or a data:image URI. */
export function isImageSource(source) {
  const value = String(source).trim();
  if (/^data:image\/(png|jpeg|gif|webp);base64,[a-z0-9+/=\s]+$/i.test(value)) return true;
  try {
    return new URL(value).protocol === 'https:';
  } catch {
    return false;
  }
}

/** The body of a message: text as text, html sanitised, an image only from a safe source. */
export function messageBody(message) {
  if (message.type === 'html') {
    const body = el('div', { class: 'message-body html' });
    body.append(sanitizedFragment(message.content));
    return body;
  }
  if (message.type === 'image' && isImageSource(message.content)) {
    return el(
      'div',
      { class: 'message-body image' },
      el('img', {
        src: message.content.trim(),
        alt: `Image sent by ${message.senderName}`,
        loading: 'lazy',
        referrerpolicy: 'no-referrer',
      }),
    );
  }
  return el('div', { class: 'message-body text' }, message.content);
}
