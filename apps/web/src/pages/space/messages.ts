// Messages: the list the stream fills (each once, html sanitised, images only from safe
// sources), and the send form.
import { ConveneError, type MessageView } from '@convene/sdk';
import { avatar } from '../../lib/avatar';
import { shownName, shownText } from '../../lib/bidi';
import { imageInWords, messageBody } from '../../lib/content';
import { $, busy, el, isolated, notify, submitButton } from '../../lib/dom';
import { describeError, statusOf } from '../../lib/errors';
import { formatTime } from '../../lib/format';
import { isImageSource } from '../../lib/image-source';
import { renderArtifacts } from './documents';
import { renderParticipants } from './participants';
import { rememberMe, type Sender, space, state } from './state';

/**
 * The last send that failed though the server may have run it (its answer lost, or a 5xx): the
 * same message sent again goes with the same Idempotency-Key, so the server answers it as it
 * answered the first rather than posting it twice.
 */
let uncertain:
  | { content: string; type: string; replyTo: string | undefined; idempotencyKey: string }
  | undefined;

/**
 * Whether the reader is at the end of the list, as their last scroll left it: a new message, and
 * an image that takes its height once loaded (after the list went to its end), keep them there.
 */
let following = true;

/** Messages of others that came while the reader was up the list: a button below says how many. */
let unseen = 0;

function caughtUp(): void {
  unseen = 0;
  $('new-messages').hidden = true;
}

/**
 * Says under the composer why a message was not sent, brought into the window: below a long page
 * the notice would be out of sight, the keyboard staying in the message box.
 */
function refuse(text: string): void {
  notify('send-notice', text);
  $('send-notice').scrollIntoView({ block: 'nearest' });
}

function toEnd(): void {
  const log = $('message-log');
  log.scrollTop = log.scrollHeight;
  caughtUp();
}

/** The frame that goes to the end, once asked for. */
let ending = 0;

/**
 * Goes to the end at the next frame: the messages of a burst (a backlog of thousands on opening)
 * are laid out once, not once each, as reading scrollHeight after each would.
 */
function toEndSoon(): void {
  if (ending) return;
  ending = requestAnimationFrame(() => {
    ending = 0;
    toEnd();
  });
}

/** The messages shown, by id: what a reply answers is found here, and its start quoted. */
const shown = new Map<string, { item: HTMLElement; name: string; start: string }>();

/**
 * The start of a message as a reply quotes it: its text on one line, cut at 60 characters (an
 * html message's text as shown, an image said as one).
 */
function startOf(message: MessageView, body: HTMLElement): string {
  if (message.type === 'image') return 'an image';
  const text = [
    ...shownText(body.textContent ?? '')
      .replace(/\s+/g, ' ')
      .trim(),
  ];
  return text.length > 60 ? `${text.slice(0, 59).join('')}…` : text.join('');
}

/** The message this tab's next send answers, shown above the composer. */
let replyingTo: string | undefined;

function replyTo(id: string | undefined): void {
  const to = id ? shown.get(id) : undefined;
  replyingTo = to && id;
  $('reply-bar').hidden = !to;
  $('reply-text').replaceChildren(...(to ? ['Replying to ', isolated(to.name), `: ${to.start}`] : []));
  if (to) $('message-content').focus();
}

/** Above a reply: what it answers, a button to it when it is on the page. */
function replyQuote(id: string): HTMLElement {
  const to = shown.get(id);
  if (!to) return el('p', { class: 'reply-to' }, '↪ in reply to an earlier message');
  return el(
    'button',
    {
      type: 'button',
      class: 'reply-to',
      onclick: () => {
        to.item.tabIndex = -1;
        to.item.scrollIntoView({ block: 'center' });
        to.item.focus({ preventScroll: true });
      },
    },
    '↪ in reply to ',
    isolated(to.name),
    `: ${to.start}`,
  );
}

export function appendMessage(message: MessageView): void {
  if (state.seen.has(message.id)) return;
  const { senderId, senderName, isOwner } = message;
  state.seen.set(message.id, { senderId, senderName, isOwner });
  if (state.sentIds.has(message.id)) learnWhoIAm(message);
  const list = $('messages');
  list.querySelector('.empty')?.remove();
  const sender = state.participants.get(message.senderId) ?? { avatarUrl: `/avatar/${message.senderId}.svg` };
  const mine = message.senderId === state.me.participantId;
  const me = state.me.participantId;
  const mentioned = me !== undefined && message.mentions.includes(me);
  const body = messageBody(message);
  const item = el(
    'li',
    {
      class: `message${mine ? ' mine' : ''}${mentioned ? ' mentioned' : ''}`,
      dataset: { messageId: message.id, type: message.type },
    },
    avatar(sender),
    el(
      'div',
      { class: 'bubble' },
      message.replyTo && replyQuote(message.replyTo),
      el(
        'div',
        { class: 'message-head' },
        el('strong', {}, isolated(message.senderName)),
        message.isOwner && el('span', { class: 'badge owner' }, 'owner'),
        mentioned &&
          el(
            'span',
            { class: 'badge mention' },
            el('span', { 'aria-hidden': 'true' }, '@you'),
            el('span', { class: 'visually-hidden' }, ' (mentions you)'),
          ),
        el('time', { datetime: message.timestamp, title: message.timestamp }, formatTime(message.timestamp)),
        el(
          'button',
          {
            type: 'button',
            class: 'small reply',
            'aria-label': `Reply to ${shownName(message.senderName)}`,
            onclick: () => replyTo(message.id),
          },
          'Reply',
        ),
      ),
      body,
    ),
  );
  shown.set(message.id, { item, name: message.senderName, start: startOf(message, body) });
  list.append(item);
  if (following || mine) toEndSoon();
  else {
    const more = $('new-messages');
    more.textContent = `${++unseen} new message${unseen > 1 ? 's' : ''} below`;
    more.hidden = false;
  }
}

/** After the backlog: an empty space says so. */
export function showEmptyMessages(): void {
  const list = $('messages');
  if (list.children.length === 0)
    list.append(
      el('li', { class: 'empty' }, 'No messages yet.', el('span', { class: 'hello' }, ' Say hello.')),
    );
}

/** A pasted key says nothing of whose it is: the first message sent with it does. */
function learnWhoIAm(message: Sender): void {
  if (state.me.participantId) return;
  rememberMe({
    ...state.me,
    participantId: message.senderId,
    role: message.isOwner ? 'owner' : 'participant',
    name: message.senderName,
  });
  // What the stream brought back before the answer that told whose it is, is this tab's too.
  for (const item of $('messages').querySelectorAll<HTMLElement>('li.message'))
    if (state.seen.get(item.dataset.messageId ?? '')?.senderId === message.senderId)
      item.classList.add('mine');
  renderParticipants();
  renderArtifacts();
}

/** A touch screen's keyboard has no Shift+Enter: there Enter writes a new line, and Send sends. */
const touch = matchMedia('(pointer: coarse)');

const placeholder = (kind: MessageView['type']): string =>
  kind === 'image'
    ? 'An https:// image URL, or a data:image/…;base64 URI'
    : kind === 'html'
      ? 'HTML, e.g. <b>bold</b> (sanitised before display)'
      : touch.matches
        ? 'Write a message'
        : 'Write a message (Enter sends, Shift+Enter for a new line)';

const messageType = (value: string): MessageView['type'] =>
  value === 'html' || value === 'image' ? value : 'text';

/** Characters as the service counts them: code points, an emoji one. */
const characters = (text: string): number =>
  text.length - (text.match(/[\ud800-\udbff][\udc00-\udfff]/g)?.length ?? 0);

const count = (n: number): string => n.toLocaleString('en');

export function wireMessages(): void {
  // The log scrolls (and takes the keyboard: PageUp reads back); the list inside it grows.
  const log = $('message-log');
  /** The log's size when the ResizeObserver below last saw it. */
  let size = '';
  const sized = () => `${log.clientWidth}×${log.clientHeight}`;
  log.addEventListener('scroll', () => {
    // A scroll the layout made (the window resized: the browser clamps the position before the
    // ResizeObserver is told) is not the reader's, and does not stop the log following: the
    // observer puts it back at the end. A reader's own scroll never changes the log's size.
    if (sized() !== size) return;
    following = log.scrollHeight - log.scrollTop - log.clientHeight < 80;
    if (following) caughtUp();
  });
  $('new-messages').addEventListener('click', () => {
    toEnd();
    log.focus();
  });
  // An image's load does not bubble: heard on the way down.
  log.addEventListener('load', () => following && toEnd(), true);
  // Nor does its failure, which left a broken icon and the log short of its end: said in words,
  // in the image's place, the log kept at its end.
  log.addEventListener(
    'error',
    (event) => {
      const img = event.target;
      // A message's image, not an avatar (which keeps its place and size).
      if (!(img instanceof HTMLImageElement) || !img.closest('.message-body')) return;
      imageInWords(img, 'could not be loaded');
      if (following) toEnd();
    },
    true,
  );
  // A resized window (a phone turned) changes the log's height and how its lines wrap, and no
  // scroll says so: a reader at the end stays there.
  new ResizeObserver(() => {
    size = sized();
    if (following) toEnd();
  }).observe(log);
  const form = $('send-form', HTMLFormElement);
  const input = $('message-content', HTMLTextAreaElement);
  const type = $('message-type', HTMLSelectElement);

  // The × goes with the bar: the keyboard stays in the message box.
  $('reply-cancel').addEventListener('click', () => {
    replyTo(undefined);
    input.focus();
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && replyingTo) replyTo(undefined);
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing && !touch.matches) {
      event.preventDefault();
      // As a form's own Enter does: nothing while its button is disabled (this message on its
      // way), where requestSubmit() sent it a second time, under a key of its own.
      submitButton(form)?.click();
    }
  });

  /**
   * The message's length near the service's limit, beside the box (a paste is never cut short, as
   * maxlength would do unsaid); beyond it, why sending is refused.
   */
  const measure = (): string | undefined => {
    const n = characters(input.value);
    // The shell carries the limits (the SDK's, at build time).
    const max = Number(
      type.value === 'image' && input.value.startsWith('data:') ? input.dataset.imageMax : input.dataset.max,
    );
    const counter = $('message-count');
    counter.hidden = n <= max * 0.9;
    counter.textContent = `${count(n)} / ${count(max)} characters`;
    counter.classList.toggle('over', n > max);
    return n > max
      ? `This message is ${count(n)} characters; the limit is ${count(max)}. Shorten it, or send it in parts.`
      : undefined;
  };
  /** The refusal of what the box held (blank, too long, no image address), until the box changes. */
  let refusedContent: string | undefined;
  const refuseContent = (text: string): void => {
    refuse(text);
    refusedContent = text;
  };
  /**
   * Taken back once it no longer holds (the text shortened, written or changed, another type): the
   * counter says the length meanwhile. A refusal of the service (muted, offline) stays until the
   * next send.
   */
  const takeBackRefusal = (): void => {
    const tooLong = measure();
    if (refusedContent !== undefined && !tooLong && $('send-notice').textContent === refusedContent) {
      notify('send-notice', '');
      refusedContent = undefined;
    }
  };
  input.addEventListener('input', takeBackRefusal);

  const retype = (): void => {
    input.placeholder = placeholder(messageType(type.value));
    takeBackRefusal();
  };
  type.addEventListener('change', retype);
  retype();

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const content = input.value;
    if (!content.trim()) {
      refuseContent('Nothing to send: write a message first.');
      return;
    }
    const tooLong = measure();
    if (tooLong) {
      refuseContent(tooLong);
      return;
    }
    if (messageType(type.value) === 'image' && !isImageSource(content)) {
      // What the server would refuse, said in the page's words and kept in the box to mend.
      refuseContent(
        'An image message is an https:// address of an image, or a data:image URI (png, jpeg, gif or webp).',
      );
      return;
    }
    notify('send-notice', '');
    await busy(submitButton(form), async () => {
      const answering = replyingTo;
      const again =
        uncertain?.content === content && uncertain.type === type.value && uncertain.replyTo === answering
          ? uncertain
          : undefined;
      try {
        const sent = await space().messages.send(
          { content, type: messageType(type.value), ...(answering ? { replyTo: answering } : {}) },
          again && { idempotencyKey: again.idempotencyKey },
        );
        uncertain = undefined;
        if (replyingTo === answering) replyTo(undefined);
        state.sentIds.add(sent.messageId);
        // The stream may have brought it back before this answer came.
        const seen = state.seen.get(sent.messageId);
        if (seen) learnWhoIAm(seen);
        input.value = '';
        measure();
        input.focus();
      } catch (error) {
        const maybe = error instanceof ConveneError && error.mayHaveRun && error.idempotencyKey;
        if (maybe) uncertain = { content, type: type.value, replyTo: answering, idempotencyKey: maybe };
        // A refusal that ran nothing (muted, a closed space): the server would replay it under
        // that key for a day, so the next send of this text goes with a key of its own.
        else if (statusOf(error) !== undefined && statusOf(error) !== 429) uncertain = undefined;
        refuse(
          statusOf(error) === 403
            ? 'The owner has muted you: you can read, but not send, until they unmute you.'
            : `${describeError(error)}${maybe ? ' If the message reached the service before that, it shows above; sending it again as it is cannot post it twice.' : ''}`,
        );
      }
    });
  });
}
