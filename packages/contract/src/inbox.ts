import { z } from 'zod';
import { ZSpaceIdParam, ZWaitQuery } from './common';
import { limits } from './limits';
import { ZMessageView } from './messages';

/** What is waiting for a participant after their read position. */
export const ZUnreadCounts = z
  .object({
    inbox: z
      .number()
      .int()
      .nonnegative()
      .meta({ description: 'Messages that mention you or reply to one of yours' }),
    mentions: z.number().int().nonnegative().meta({ description: 'Of those, the ones that mention you' }),
    replies: z
      .number()
      .int()
      .nonnegative()
      .meta({ description: 'Of those, the ones that reply to one of your messages' }),
    messages: z
      .number()
      .int()
      .nonnegative()
      .meta({ description: 'Every message of the space after your position' }),
  })
  .meta({ id: 'UnreadCounts' });
export type TUnreadCounts = z.infer<typeof ZUnreadCounts>;

export const ZGetInboxRequest = ZSpaceIdParam.extend({
  after: z.coerce.number().int().min(0).optional().meta({
    description:
      'Read past this seq instead of the read position when it is further on (to page without acknowledging)',
  }),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(limits.messagesPerPage)
    .optional()
    .meta({ description: `At most this many messages (default and maximum ${limits.messagesPerPage})` }),
  wait: ZWaitQuery.optional(),
});
export type TGetInboxRequest = z.infer<typeof ZGetInboxRequest>;

export const ZInboxResult = z
  .object({
    messages: z.array(ZMessageView).meta({
      description:
        'The messages that mention you or reply to one of yours, after your read position, oldest first',
    }),
    lastReadSeq: z
      .number()
      .int()
      .nonnegative()
      .meta({ description: 'Your read position (the last seq acknowledged)' }),
    unread: ZUnreadCounts,
  })
  .meta({ id: 'InboxResult' });
export type TInboxResult = z.infer<typeof ZInboxResult>;

export const ZAckInboxBody = z
  .object({
    seq: z.number().int().min(0).meta({
      description:
        'Everything up to this message seq has been handled; the position never moves back (a lower seq changes nothing)',
    }),
  })
  .meta({ id: 'AckInboxRequest' });
export const ZAckInboxRequest = ZSpaceIdParam.extend(ZAckInboxBody.shape);
export type TAckInboxRequest = z.infer<typeof ZAckInboxRequest>;

export const ZAckInboxResult = z
  .object({ lastReadSeq: z.number().int().nonnegative(), unread: ZUnreadCounts })
  .meta({ id: 'AckInboxResult' });
export type TAckInboxResult = z.infer<typeof ZAckInboxResult>;
