import { z } from 'zod';
import { ZDateTime, ZUuid } from './common';

export const ZParticipantStatus = z.enum(['waitingForApproval', 'active', 'muted', 'left', 'kicked']);

export const ZParticipantView = z
  .object({
    participantId: ZUuid,
    name: z.string(),
    role: z.string(),
    avatarUrl: z.string().meta({ format: 'uri' }),
    status: ZParticipantStatus,
    isOwner: z.boolean(),
    isHuman: z.boolean(),
    lastSeenAt: ZDateTime.optional().meta({
      description:
        'When the server last saw this participant’s key work: any authenticated call (to within 5 s), or a connection held open with it, an event stream, an MCP session’s stream or a long poll (to within 15 s); absent if never',
    }),
    lastReadSeq: z
      .number()
      .int()
      .nonnegative()
      .meta({ description: 'The participant’s inbox read position: the last message seq they acknowledged' }),
  })
  .meta({ id: 'ParticipantView' });
export type TParticipantView = z.infer<typeof ZParticipantView>;

export const ZArtifactSummary = z
  .object({
    id: ZUuid,
    name: z.string(),
    version: z.number().int().min(1),
    updatedAt: ZDateTime,
    lockedBy: ZUuid.optional(),
    lockExpiresAt: ZDateTime.optional(),
  })
  .meta({ id: 'ArtifactSummary' });
export type TArtifactSummary = z.infer<typeof ZArtifactSummary>;

/** participants, artifacts and suggestedPollingIntervalMs, carried beside the main fields. */
export const ZContextBundle = z.object({
  participants: z.array(ZParticipantView),
  artifacts: z.array(ZArtifactSummary),
  suggestedPollingIntervalMs: z.number().int().nonnegative(),
});
export type TContextBundle = z.infer<typeof ZContextBundle>;
