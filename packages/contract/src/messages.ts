import { z } from 'zod';
import { ZDateTime, ZSpaceIdParam, ZUuid, ZUuidInput, ZWaitQuery } from './common';
import { characterCount, limits } from './limits';
import { ZContextBundle } from './views';

export const ZMessageType = z.enum(['text', 'image', 'html']);
export type TMessageType = z.infer<typeof ZMessageType>;

const DATA_URI_RE = /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+={0,2}$/;

/** `image` content: an `https:` URL, or a base64 data URI of a PNG, JPEG, GIF or WebP image. */
export function imageContentProblem(content: string): string | null {
  if (content.startsWith('data:')) {
    if (content.length > limits.imageDataUriMax)
      return `image data URIs are at most ${limits.imageDataUriMax} characters`;
    return DATA_URI_RE.test(content)
      ? null
      : 'image data URIs must be data:image/(png|jpeg|gif|webp);base64,…';
  }
  if (characterCount(content) > limits.messageMax)
    return `content is at most ${limits.messageMax} characters`;
  // The URL parser drops leading and trailing spaces and any tab or newline inside: what would be
  // stored is not the URL it reads.
  if (/[\s\p{Cc}]/u.test(content))
    return 'image URLs hold no spaces, line breaks or control characters (percent-encode them)';
  try {
    const url = new URL(content);
    if (url.protocol === 'https:' && url.hostname) return null;
  } catch {
    // not a URL: answered below
  }
  return 'image content must be an https: URL or a data:image/(png|jpeg|gif|webp);base64, URI';
}

export const ZSendMessageRequest = ZSpaceIdParam.extend({
  content: z
    .string()
    .min(1)
    // PostgreSQL text cannot hold NUL.
    .refine((value) => !value.includes('\u0000'), 'content cannot contain NUL characters')
    // Image data URIs may be up to 1 MiB; everything else is checked against 65,536 below (which
    // content beyond both never reaches: it is refused once).
    .max(limits.imageDataUriMax, {
      message: `content is at most ${limits.messageMax} characters (an image data URI ${limits.imageDataUriMax})`,
      abort: true,
    })
    .meta({
      description: `1 to ${limits.messageMax} characters; for type image an https: URL or a data:image/(png|jpeg|gif|webp);base64, URI (up to 1 MiB). Every reader's browser fetches an https: image from its host, which so learns the reader's address; a data: URI is embedded and fetched from nowhere.`,
    }),
  type: ZMessageType.default('text').meta({
    description: 'text (the default), image (content is an https: URL or a data: URI, see content) or html',
  }),
  mentions: z
    .array(ZUuidInput)
    .max(limits.mentionsMax)
    .optional()
    .meta({
      description: `Participants this message is for (at most ${limits.mentionsMax}); each must be in the space (400 otherwise). \`@Name\` in text content mentions too (exact name, any case)`,
    }),
  replyTo: ZUuidInput.optional().meta({ description: 'The id of a message of this space this one answers' }),
}).superRefine((input, ctx) => {
  const problem =
    input.type === 'image'
      ? imageContentProblem(input.content)
      : characterCount(input.content) > limits.messageMax
        ? `content is at most ${limits.messageMax} characters`
        : null;
  if (problem) ctx.addIssue({ code: 'custom', path: ['content'], message: problem });
});
export type TSendMessageRequest = z.infer<typeof ZSendMessageRequest>;

export const ZSendMessageResult = z
  .object({
    messageId: ZUuid,
    mentions: z.array(ZUuid).meta({
      description: 'Everyone the message mentions: the explicit mentions and those named with `@Name`',
    }),
  })
  .extend(ZContextBundle.shape)
  .meta({ id: 'SendMessageResult' });
export type TSendMessageResult = z.infer<typeof ZSendMessageResult>;

export const ZMessageView = z
  .object({
    id: ZUuid,
    senderId: ZUuid,
    senderName: z.string(),
    isOwner: z.boolean(),
    content: z.string(),
    type: ZMessageType,
    timestamp: ZDateTime.meta({
      description: 'Strictly increasing within a space, microsecond precision (6 fractional digits, UTC)',
    }),
    seq: z.number().int().min(1).meta({ description: '1, 2, 3… per space, in the same order as timestamps' }),
    mentions: z
      .array(ZUuid)
      .meta({ description: 'The participants mentioned (explicitly or by `@Name`); empty when none' }),
    replyTo: ZUuid.optional().meta({ description: 'The message this one answers' }),
  })
  .meta({ id: 'MessageView' });
export type TMessageView = z.infer<typeof ZMessageView>;

/**
 * An RFC 3339 date-time. A `+` of the offset that arrived unencoded in a query string reads as a
 * space; it is taken back, as a careful client would expect. The lower-case `t` and `z` that RFC
 * 3339 allows (section 5.6) are read as `T` and `Z`.
 */
export const ZTimestampQuery = z.preprocess(
  (value) =>
    typeof value === 'string'
      ? value
          .replace(/ (\d{2}:?\d{2})$/, '+$1')
          .replace(/^(\d{4}-\d{2}-\d{2})t/, '$1T')
          .replace(/z$/, 'Z')
      : value,
  z.iso
    // `abort`: a value that is no date-time at all is said once, not again by the check below.
    .datetime({ offset: true, abort: true, error: 'not an RFC 3339 date-time (e.g. 2030-01-01T12:00:00Z)' })
    // Year 0000 parses in JavaScript but is outside PostgreSQL's calendar.
    .refine((value) => !value.startsWith('0000') && !Number.isNaN(Date.parse(value)), 'not a valid date-time')
    .meta({ format: 'date-time', example: '2030-01-01T12:00:00.000000Z' }),
);

export const ZListMessagesRequest = ZSpaceIdParam.extend({
  timestamp: ZTimestampQuery.optional().meta({
    description: 'Only messages after this instant (pass the previous cursor)',
  }),
  wait: ZWaitQuery.optional(),
});
export type TListMessagesRequest = z.infer<typeof ZListMessagesRequest>;

export const ZListMessagesResult = z
  .object({
    messages: z.array(ZMessageView).meta({ description: `Oldest first, at most ${limits.messagesPerPage}` }),
    cursor: ZDateTime.meta({
      description:
        'Timestamp of the last message returned, else the request timestamp (or the space creation time): pass it as the next timestamp',
    }),
  })
  .extend(ZContextBundle.shape)
  .meta({ id: 'ListMessagesResult' });
export type TListMessagesResult = z.infer<typeof ZListMessagesResult>;
