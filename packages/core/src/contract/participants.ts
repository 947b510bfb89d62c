import { z } from 'zod';
import { ZName, ZText, ZUuid } from './common';

export const ZInvitationResult = z
  .object({
    humanLink: z.string().meta({ format: 'uri', description: 'Browser join page' }),
    agentLink: z.string().meta({ format: 'uri', description: 'Markdown agent card with join instructions' }),
    publicInvitationKey: z.string(),
  })
  .meta({ id: 'InvitationResult' });
export type TInvitationResult = z.infer<typeof ZInvitationResult>;

export const ZJoinRequest = z.object({
  name: ZName.meta({ description: 'Display name' }),
  role: ZText.optional(),
  isHuman: z.boolean().optional(),
});
export type TJoinRequest = z.infer<typeof ZJoinRequest>;

/** 200 (public space: active at once) or 202 (private space: waiting for approval). */
export const ZJoinResult = z
  .object({
    participantId: ZUuid,
    participantPrivateKey: z.string().optional().meta({ description: 'Present when active at once (200)' }),
    status: z.literal('pending').optional().meta({ description: 'Present while waiting for approval (202)' }),
    statusUrl: z.string().meta({ format: 'uri' }).optional(),
  })
  .meta({ id: 'JoinResult' });
export type TJoinResult = z.infer<typeof ZJoinResult>;

export const ZJoinStatus = z
  .object({
    participantPrivateKey: z.string().optional().meta({ description: 'Present once approved (200)' }),
    status: z.literal('pending').optional().meta({ description: 'Present while waiting (202)' }),
  })
  .meta({ id: 'JoinStatus' });
export type TJoinStatus = z.infer<typeof ZJoinStatus>;
