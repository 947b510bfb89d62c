// DOM helpers shared by the pages. User data goes into the page as text (text nodes, attribute
// values); the one exception is a message of type html, which goes through DOMPurify first
// (content.ts).
import { shownName } from './bidi';
import { getSession } from './storage';

/**
 * The element with this id in the page's shell, checked to be of `type`: a shell and its script
 * that disagree fail at once, loudly, instead of later on a property of undefined.
 */
export function $(id: string): HTMLElement;
export function $<T extends HTMLElement>(id: string, type: abstract new () => T): T;
export function $(id: string, type: abstract new () => HTMLElement = HTMLElement): HTMLElement {
  const node = document.getElementById(id);
  if (!(node instanceof type)) throw new Error(`the page has no ${type.name} #${id}`);
  return node;
}

export type Child = Node | string | number | false | null | undefined | Child[];

export interface Attributes {
  class?: string | undefined;
  dataset?: Record<string, string> | undefined;
  onclick?: ((event: MouseEvent) => void) | undefined;
  /** Any other attribute: `true` sets it empty, `false`, null and undefined leave it out. */
  [name: string]:
    | string
    | number
    | boolean
    | null
    | undefined
    | Record<string, string>
    | ((event: MouseEvent) => void);
}

/**
 * Builds an element: `el('li', { class: 'x', dataset: { id } }, 'text', child)`. Strings become
 * text nodes, never markup.
 */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  const element: HTMLElement = node;
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') node.className = String(value);
    else if (name === 'dataset') Object.assign(node.dataset, value);
    else if (name === 'onclick' && typeof value === 'function') element.addEventListener('click', value);
    else if (typeof value !== 'object' && typeof value !== 'function')
      node.setAttribute(name, value === true ? '' : String(value));
  }
  append(node, children);
  return node;
}

function append(node: Element, children: Child[]): void {
  for (const child of children) {
    if (Array.isArray(child)) append(node, child);
    else if (child instanceof Node) node.append(child);
    else if (child !== undefined && child !== null && child !== false) node.append(String(child));
  }
}

/** A name set apart from the text around it (`<bdi>`), its bidi controls written out. */
export const isolated = (name: string): HTMLElement => el('bdi', {}, shownName(name));

/** The button that had the keyboard focus when `busy` disabled it, while it is busy. */
let focusedWhileBusy: HTMLButtonElement | undefined;

/**
 * Replaces a list's items without losing the keyboard focus: a list redrawn while someone tabs
 * through it (the stream redraws on every change) would drop the focus to the page's start. When
 * the focus was inside an item with a `data-key`, it goes to the new item of that key: the control
 * of the same name, else the item's first button; else (the item is gone, or has no button left:
 * someone removed, a request refused) to `fallback`, the list's heading, not to the page's body.
 */
export function replaceItems(list: HTMLElement, items: Node[], fallback?: HTMLElement): void {
  const active =
    document.activeElement && document.activeElement !== document.body
      ? document.activeElement
      : focusedWhileBusy;
  const item = active instanceof HTMLElement && list.contains(active) ? active.closest('[data-key]') : null;
  const key = item instanceof HTMLElement ? item.dataset.key : undefined;
  const name = active?.getAttribute('aria-label') ?? active?.textContent;
  list.replaceChildren(...items);
  if (key === undefined) return;
  const again = [...list.querySelectorAll<HTMLElement>('[data-key]')].find((i) => i.dataset.key === key);
  const buttons = [...(again?.querySelectorAll('button') ?? [])];
  const target = buttons.find((b) => (b.getAttribute('aria-label') ?? b.textContent) === name) ?? buttons[0];
  (target ?? fallback)?.focus({ preventScroll: true });
}

export type NoticeKind = 'error' | 'ok' | 'warn' | '';

/** Shows a message in a page's notice region (a live region); an empty text hides it. */
export function notify(id: string, text: string, kind: NoticeKind = 'error'): void {
  const region = document.getElementById(id);
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
export async function busy<T>(target: EventTarget | null | undefined, action: () => Promise<T>): Promise<T> {
  const button = target instanceof HTMLButtonElement ? target : undefined;
  // A disabled button loses the keyboard focus: it is given back when the button is enabled again
  // (or, by replaceItems, to the button that took its place meanwhile).
  const focused = button !== undefined && document.activeElement === button;
  if (button) button.disabled = true;
  if (focused) focusedWhileBusy = button;
  try {
    return await action();
  } finally {
    if (button) button.disabled = false;
    if (focused && focusedWhileBusy === button) {
      focusedWhileBusy = undefined;
      // A button the action hid (Done editing, Force unlock) hands the focus to the one its
      // data-focus-after names (Lock and edit, back in its place), not to the page's body.
      const after = button.hidden ? button.dataset.focusAfter : undefined;
      const next = after === undefined ? button : document.getElementById(after);
      if (button.isConnected && document.activeElement === document.body)
        next?.focus({ preventScroll: true });
    }
  }
}

/** The submit button of a form, for `busy`. */
export const submitButton = (form: HTMLFormElement): HTMLButtonElement | null =>
  form.querySelector('button[type=submit]') ?? form.querySelector('button');

/** Every `[data-copy=id]` button copies the text of the element with that id. */
export function wireCopyButtons(): void {
  document.addEventListener('click', async (event) => {
    const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
    if (!(button instanceof HTMLButtonElement)) return;
    const source = document.getElementById(button.dataset.copy ?? '');
    if (!source) return;
    const text = source instanceof HTMLInputElement ? source.value : (source.textContent ?? '');
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Without the clipboard API (plain http on another host), select the text for Ctrl+C.
      const range = document.createRange();
      range.selectNodeContents(source);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
      if (source instanceof HTMLInputElement) source.select();
    }
    // The button's name says what it copies (aria-label); "Copied" is shown in its place a moment,
    // and its name keeps what was copied ("Copied the new token", not a bare "Copied").
    const [label, name] = [button.textContent, button.getAttribute('aria-label')];
    button.textContent = 'Copied';
    if (name) button.setAttribute('aria-label', name.replace(/^Copy\b/, 'Copied'));
    setTimeout(() => {
      button.textContent = label;
      if (name) button.setAttribute('aria-label', name);
    }, 1500);
  });
}

/** The navigation shows who is logged in, or the way to log in (again, once a session is refused). */
export function renderSessionNav(): void {
  const slot = document.getElementById('session-nav');
  const session = getSession();
  if (!slot) return;
  if (!session) {
    if (!slot.querySelector('a')) slot.replaceChildren(el('a', { href: '/login' }, 'Log in'));
    // Logged in, the human comes back to the page they were on (a space's page uses the keys of
    // their dashboard); from home and the login page itself, to the dashboard.
    const here = location.pathname;
    if (!['/', '/login', '/dashboard'].includes(here))
      slot.querySelector('a')?.setAttribute('href', `/login?next=${encodeURIComponent(here)}`);
    return;
  }
  slot.replaceChildren(el('span', { class: 'meta', title: session.user.email }, session.user.name || 'you'));
}

/** Form fields as trimmed strings (a missing field is ''). */
export function formText(form: HTMLFormElement): (name: string) => string {
  const data = new FormData(form);
  return (name) => String(data.get(name) ?? '').trim();
}

/** A confirmation the human answers before something that cannot be undone. */
export const confirmed = (question: string): boolean => window.confirm(question);

export const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
