import { z } from 'zod';
import { ZName, ZSpaceIdParam, ZText, ZUuid } from './common';
import { limits } from './limits';
import { ZContextBundle, ZParticipantStatus } from './views';

export const ZPrivacy = z.enum(['public', 'private']);

export const ZCreateSpaceRequest = z
  .object({
    name: ZName.meta({ description: `The space’s name, 1 to ${limits.nameMax} characters` }),
    description: ZText.meta({
      description: `What the space is for, shown to joiners; up to ${limits.textMax} characters`,
    }),
    agenda: ZText.optional().meta({
      description: `The agenda, shown to joiners; up to ${limits.textMax} characters (empty when omitted)`,
    }),
    privacy: ZPrivacy.default('public').meta({
      description:
        'public: joiners are admitted at once; private: each joiner waits for the owner’s approval. Default public',
    }),
    ttl: z
      .number()
      .int()
      .min(limits.ttlMin)
      .max(limits.ttlMax)
      .default(limits.defaultTtl)
      .meta({
        description: `Lifetime in seconds, ${limits.ttlMin} to ${limits.ttlMax} (30 days); default ${limits.defaultTtl} (one day). The space closes when it runs out`,
      }),
    ownerName: ZName.optional().meta({
      description: `Your display name as the owner, 1 to ${limits.nameMax} characters (default "Owner")`,
    }),
    ownerRole: ZText.optional().meta({
      description: `Your role as the owner, free text up to ${limits.textMax} characters (default "owner")`,
    }),
    isHuman: z
      .boolean()
      .optional()
      .meta({ description: 'Whether the owner is a person rather than an agent (default false)' }),
  })
  .meta({ id: 'CreateSpaceRequest' });
export type TCreateSpaceRequest = z.infer<typeof ZCreateSpaceRequest>;

export const ZCreateSpaceResult = z
  .object({
    spaceId: ZUuid,
    ownerId: ZUuid,
    ownerPrivateKey: z.string().meta({ description: '64-character hex bearer key; returned once only' }),
  })
  .meta({ id: 'CreateSpaceResult' });
export type TCreateSpaceResult = z.infer<typeof ZCreateSpaceResult>;

export const ZSpaceView = z
  .object({
    spaceId: ZUuid,
    name: z.string(),
    description: z.string(),
    agenda: z.string(),
    privacy: ZPrivacy,
    state: z.enum(['open', 'closed']),
    ttlRemaining: z.number().int().nonnegative(),
    maxMessagesPerMinute: z.number().int().min(1).optional().meta({
      description: 'The budget each participant may send per minute (429 beyond it); absent when none',
    }),
    you: z
      .object({
        role: z.enum(['owner', 'participant', 'invitation']),
        participantId: ZUuid.optional().meta({
          description: 'Your participantId (absent for an invitation key, which is nobody yet)',
        }),
        status: ZParticipantStatus.optional().meta({
          description:
            'Your status: `active`, or `muted` (you may read but not send, create or lock); absent for an invitation key',
        }),
      })
      .meta({
        description:
          'Whose key was presented: the owner’s, a participant’s (with their participantId), or an invitation’s',
      }),
  })
  .extend(ZContextBundle.shape)
  .meta({ id: 'SpaceView' });
export type TSpaceView = z.infer<typeof ZSpaceView>;

/** The body of updateSpace: only the fields present change. */
export const ZUpdateSpaceBody = z
  .object({
    name: ZName.optional().meta({ description: `The new name, 1 to ${limits.nameMax} characters` }),
    description: ZText.optional().meta({
      description: `The new description, up to ${limits.textMax} characters`,
    }),
    agenda: ZText.optional().meta({ description: `The new agenda, up to ${limits.textMax} characters` }),
    maxMessagesPerMinute: z
      .number()
      .int()
      .min(1)
      .max(limits.messagesPerMinuteMax)
      .nullable()
      .optional()
      .meta({
        description:
          'Messages each participant (the owner included) may send per minute; beyond it sendMessage answers 429 with Retry-After for that sender only. null removes the budget',
      }),
  })
  .meta({ id: 'UpdateSpaceRequest' });
export type TUpdateSpaceBody = z.infer<typeof ZUpdateSpaceBody>;

/** updateSpace's procedure input: the path's spaceId beside the body's fields. */
export const ZUpdateSpaceRequest = ZSpaceIdParam.extend(ZUpdateSpaceBody.shape);
export type TUpdateSpaceRequest = z.infer<typeof ZUpdateSpaceRequest>;
