import { APIPromise, type WithResponse } from './api-promise';
import type { ListMessagesResult, MessageView, SendMessageParams, SendMessageResult } from './generated';
import { longPollOptions } from './inbox';
import { refuseMisplacedOptions, refuseMisplacedParams, showAs, timestampOf } from './internal';
import { SpaceResource } from './space-resource';
import { MessageStream, type StreamOptions } from './stream';
import type { RequestOptions } from './transport';

export interface ListOptions {
  /** Only messages after this instant: pass the `cursor` of an earlier list to continue from it. */
  since?: string | Date | undefined;
  /**
   * Long poll: when nothing is there after `since` yet, wait up to this many seconds (at most 60)
   * and answer as soon as a message arrives. Iterating, only the last page waits.
   */
  wait?: number | undefined;
}

/**
 * The messages of a space after a cursor. Awaited, it is the first page (`ListMessagesResult`,
 * at most 500 messages, with its `cursor` and the space's context); iterated with `for await`, it
 * yields every message, oldest first, following the cursors until a page comes back empty.
 * `cursor` then holds where the next list should start. Nothing is asked of the server until the
 * list is first awaited or iterated: a list made now and read later reads the messages there then,
 * and its failure (a refused key) is thrown where it is read, never left unobserved meanwhile.
 */
export class MessageList extends APIPromise<ListMessagesResult> implements AsyncIterable<MessageView> {
  declare private lastCursor: string | undefined;

  /** @internal */
  constructor(
    first: () => Promise<WithResponse<ListMessagesResult>>,
    private readonly nextPage: (cursor: string) => Promise<ListMessagesResult>,
  ) {
    super(first);
    showAs(MessageList, 'MessageList');
  }

  /** Where the list is, never the key its pages are read with: what `JSON.stringify` shows. */
  toJSON(): { cursor: string | undefined } {
    return { cursor: this.lastCursor };
  }

  /** The cursor of the last page read while iterating (undefined before the first page). */
  get cursor(): string | undefined {
    return this.lastCursor;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<MessageView> {
    let page = (await this.withResponse()).data;
    for (;;) {
      this.lastCursor = page.cursor;
      if (page.messages.length === 0) return;
      yield* page.messages;
      page = await this.nextPage(page.cursor);
    }
  }
}

/** A message's fields, which a request option never is (see refuseMisplacedParams). */
const SEND_PARAMS = ['content', 'type', 'mentions', 'replyTo'];

/** Messages of one space, sent and read with the key the space client holds. */
export class Messages extends SpaceResource {
  /** @internal */
  constructor(...args: ConstructorParameters<typeof SpaceResource>) {
    super(...args);
    showAs(Messages, 'Messages');
  }

  /**
   * Sends a message: a string is `text`; pass `{ content, type: 'html' | 'image' }` for others,
   * and `mentions` (participant ids) or `replyTo` (a message id) to address it (`@Name` in text
   * mentions too).
   */
  send(message: string | SendMessageParams, options?: RequestOptions): APIPromise<SendMessageResult> {
    const params = typeof message === 'string' ? { content: message } : message;
    return new APIPromise(
      (async () => {
        // `send("text", { replyTo })` from plain JavaScript: refused, not posted without its reply.
        refuseMisplacedParams('sendMessage', options, SEND_PARAMS);
        return this.call('sendMessage', {}, params, options).withResponse();
      })(),
    );
  }

  /** The messages after `since` (every message without it), page by page: see MessageList. */
  list(params?: ListOptions, options?: RequestOptions): MessageList {
    const { since, wait } = params ?? {};
    const page = (timestamp: string | undefined) =>
      this.call('listMessages', {}, { timestamp, wait }, longPollOptions(this.transport, wait, options));
    // A `since` that is no date-time rejects the list, as a refused request would.
    const first = async () => {
      refuseMisplacedOptions('listMessages', params);
      return page(timestampOf(since)).withResponse();
    };
    return new MessageList(first, page);
  }

  /**
   * The space's live events (`message`, `participant-status`, `context`, `artifact-*`,
   * `space-closed`, `webhook-disabled`) as an async iterable that reconnects by itself: see MessageStream.
   */
  stream(options?: StreamOptions): MessageStream {
    return new MessageStream(this.transport, this.spaceId, this.key, this.participantId, options ?? {});
  }
}
