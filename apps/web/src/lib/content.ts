// How a message's content reaches the page: text as text, html through DOMPurify, an image only
// from a safe source.
import type { MessageView } from '@convene/sdk';
import DOMPurify, { type Config } from 'dompurify';
import { el } from './dom';
import { isImageSource } from './image-source';

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  // Links in messages leave the page without telling the other site where they came from.
  if (node.tagName === 'A' && node.hasAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
  }
  if (node.tagName === 'IMG' && !isImageSource(node.getAttribute('src') ?? '')) node.removeAttribute('src');
});

const SANITIZE: Config = {
  USE_PROFILES: { html: true },
  // Inline style is refused by the page's CSP anyway; forms and media have no place in a message.
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'video', 'audio', 'source'],
  FORBID_ATTR: ['style', 'srcset'],
};

/** Sanitised markup of an html message, as a fragment (never the raw content). */
export function sanitizedFragment(html: string): DocumentFragment {
  return DOMPurify.sanitize(html, { ...SANITIZE, RETURN_DOM_FRAGMENT: true });
}

/** The body of a message: text as text, html sanitised, an image only from a safe source. */
export function messageBody(message: MessageView): HTMLElement {
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
