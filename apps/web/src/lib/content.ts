// How a message's content reaches the page: text as text, html through DOMPurify, an image only
// from a safe source.
import type { MessageView } from '@convene/sdk';
import DOMPurify, { type Config } from 'dompurify';
import { shownName, shownText } from './bidi';
import { el } from './dom';
import { isImageSource } from './image-source';
import { mask, unmask } from './markup-mask';

/** This module's own sanitiser: its hooks apply to messages only. */
const purify = DOMPurify(window);

/**
 * What an html message may hold: formatted text, lists, tables, links and images. Nothing that
 * acts (script, forms, frames, media, styles), nothing that names itself (`id`, `name`: a message
 * would clobber the page's globals and take the ids the page looks its own elements up by), and
 * nothing that dresses as the page (`class`, `style`, `data-*`).
 */
const SANITIZE: Config = {
  ALLOWED_TAGS: [
    ...['a', 'abbr', 'b', 'bdi', 'bdo', 'blockquote', 'br', 'cite', 'code', 'del', 'details', 'dfn'],
    ...['div', 'em', 'figcaption', 'figure', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'i', 'img'],
    ...['ins', 'kbd', 'mark', 'p', 'pre', 'q', 'rp', 'rt', 'ruby', 's', 'samp', 'small', 'span'],
    ...['strong', 'sub', 'summary', 'sup', 'time', 'u', 'var', 'wbr'],
    ...['ul', 'ol', 'li', 'dl', 'dt', 'dd'],
    ...['table', 'caption', 'colgroup', 'col', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td'],
  ],
  ALLOWED_ATTR: [
    ...['href', 'src', 'alt', 'title', 'lang', 'dir', 'datetime', 'open', 'start', 'reversed'],
    ...['colspan', 'rowspan', 'span', 'scope', 'headers', 'abbr'],
  ],
  ALLOW_DATA_ATTR: false,
  // A masked <style> (markup-mask.ts) goes with what it holds, as a real one would.
  ADD_FORBID_CONTENTS: [mask('style'), mask('<base').slice(1)],
};

// DOMPurify parses the markup in an inert document of its own and walks every node of it: each
// text gets its masked characters back before DOMPurify looks at it, and each attribute value
// before DOMPurify judges it. Nothing reaches the live page but the fragment it returns.
purify.addHook('beforeSanitizeElements', (node) => {
  if (node instanceof CharacterData) node.data = shownText(unmask(node.data));
});
purify.addHook('uponSanitizeAttribute', (_node, data) => {
  data.attrValue = unmask(data.attrValue);
});
purify.addHook('afterSanitizeAttributes', (node) => {
  // Links in messages leave the page without telling the other site where they came from.
  if (node.tagName === 'A' && node.hasAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
  }
  // A heading in a message sits under the page's "Messages" (h2), never beside the page's own.
  if (/^H[1-6]$/.test(node.tagName))
    node.setAttribute('aria-level', String(Math.min(6, 2 + Number(node.tagName[1]))));
  if (node.tagName === 'IMG') {
    if (!isImageSource(node.getAttribute('src') ?? '')) node.removeAttribute('src');
    imageAttributes(node);
  }
});

/**
 * An image from another site tells it the reader's address whatever we do (SECURITY.md); it
 * learns nothing more: no Referer, and nothing fetched before the reader scrolls to it.
 */
function imageAttributes(img: Element): void {
  img.setAttribute('referrerpolicy', 'no-referrer');
  img.setAttribute('loading', 'lazy');
  img.setAttribute('decoding', 'async');
}

/** Sanitised markup of an html message, as a fragment (never the raw content). */
export function sanitizedFragment(html: string): DocumentFragment {
  // Null, not a fragment, for markup whose document has no body (a <frameset>): nothing to show,
  // where appending it wrote "null".
  const fragment: DocumentFragment | null = purify.sanitize(mask(html), {
    ...SANITIZE,
    RETURN_DOM_FRAGMENT: true,
  });
  if (!fragment) return document.createDocumentFragment();
  // An image whose source was taken out would show as a broken-image icon on a line of its own:
  // it says so in words, inline, with its alt text.
  for (const img of fragment.querySelectorAll('img:not([src])')) imageInWords(img, 'not shown');
  return fragment;
}

/**
 * An image put in words in its place, inline, with its alt text: `(image not shown: a cat)`. A
 * plain span: a message's markup carries no class (the page's styles are the page's own).
 */
export function imageInWords(img: Element, what: string): void {
  const alt = shownText(img.getAttribute('alt') ?? '').trim();
  img.replaceWith(el('span', {}, `(image ${what}${alt ? `: ${alt}` : ''})`));
}

/** The body of a message: text as text, html sanitised, an image only from a safe source. */
export function messageBody(message: MessageView): HTMLElement {
  if (message.type === 'html') {
    const body = el('div', { class: 'message-body html' });
    body.append(sanitizedFragment(message.content));
    // Everything was taken out (a script, a frame, an image with a handler): not a blank bubble.
    if (!body.textContent?.trim() && !body.querySelector('img[src], hr')) {
      body.classList.add('removed');
      body.textContent = '(content removed: nothing in this message could be shown safely)';
    }
    return body;
  }
  if (message.type === 'image' && isImageSource(message.content)) {
    const img = el('img', {
      src: message.content.trim(),
      alt: `Image sent by ${shownName(message.senderName)}`,
    });
    imageAttributes(img);
    return el('div', { class: 'message-body image' }, img);
  }
  return el('div', { class: 'message-body text' }, shownText(message.content));
}
